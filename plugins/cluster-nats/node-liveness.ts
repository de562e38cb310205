/**
 * Which nodes are alive (docs/cluster.md, "Sessions"): each node renews a key of its own, its
 * name, in the JetStream KV bucket `ENGINE_NODES`, whose keys lapse `cluster_node_lease_ms`
 * after their last renewal (the bucket's max age), every quarter of the lease. A node whose key
 * has lapsed is dead: the first live node by name claims each session the dead node owned, with
 * a claim that holds only while the dead node still owns it (session-claims.ts), so every session
 * is adopted once even when two survivors see the cluster differently for a moment. The adopter
 * loads the session as one whose connection ended: its will is sent, its expiry runs there. The
 * same survivor removes the dead node's members of shared subscription groups (their messages go
 * to the live members from then on).
 *
 * Self-fencing (docs/cluster.md, "Self-fencing"): a node whose renewals fail stops serving any
 * session half a lease after the last renewal that succeeded was SENT. Its key was stored after
 * that send, so no survivor can see it lapse earlier than a whole lease after it: the other half
 * is the margin for this node's timer running late and for closing its connections. It serves
 * again once a renewal succeeds and it has applied the stream up to the tail read after it.
 *
 * The fence timer alone is not enough: a process paused (SIGSTOP, a frozen VM, a long GC pause)
 * for longer than half a lease runs, once resumed, its timers due before the fence timer (the
 * MQTT keep-alive sweep closing silent connections and sending their wills) and its pending
 * reads (client PUBLISHes, stream records to deliver) in an order of its own. So the lease is
 * also checked where work begins (leaseHeld(): one clock read per chunk read, record applied,
 * turn of writes or sweep; nothing per message), and a node that no longer holds it fences at
 * once, before it answers, delivers or writes anything; the turn writer refuses what was made
 * meanwhile (docs/cluster.md, "A node paused").
 *
 * A node serves only once it holds a lease: start() resolves after its first renewal is stored,
 * and the plugin's start hook runs before the listeners open. A first renewal that is slow (a
 * loaded machine, a bucket being created) delays the start; it never fences a node that has just
 * started, and a node restarted after a crash never serves while its previous run's key lapses.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { ClusterLink } from './stream';
import type { SessionClaims } from './session-claims';

export const NODES_BUCKET = 'ENGINE_NODES';

type Log = { info(o: object, m: string): void; warn(o: object, m: string): void };

export class NodeLiveness {
  private kv: KV | null = null;
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;
  private checking = false;
  private stopped = false;
  /** Client ids whose adoption claim is on its way (not claimed again meanwhile). */
  private readonly adopting = new Set<string>();
  /** Dead nodes whose node-local state is being removed (not removed again meanwhile). */
  private readonly handingOver = new Set<string>();
  /** Nodes whose key this node has seen. */
  private readonly seen = new Set<string>();
  /** Nodes never seen, by when this node first looked for their key (performance.now()). */
  private readonly unseenSince = new Map<string, number>();
  /**
   * Since when this node's own renewals have succeeded without a failure (null: the last one
   * failed). Nobody is judged dead before a whole lease of it: while the bucket was unavailable
   * (a failover, quorum lost) every node's key may have lapsed, the live ones' too.
   */
  private renewedSince: number | null = null;
  /** When the latest renewal that succeeded was sent (performance.now()); null: none yet. */
  private lastRenewalSent: number | null = null;
  private fenceTimer: NodeJS.Timeout | null = null;
  /**
   * When this node stops holding its lease (performance.now()): half a lease after the last
   * renewal sent that succeeded. Infinity before the first renewal and once stopped (nothing is judged then).
   */
  private fenceAt = Infinity;
  private unfencing = false;

  constructor(
    private readonly link: ClusterLink,
    private readonly node: string,
    private readonly leaseMs: number,
    private readonly replicas: number,
    private readonly claims: SessionClaims,
    private readonly log: Log,
    /** Applies the stream up to its tail as read now; false when the stream could not answer. */
    private readonly catchUp: () => Promise<boolean>,
  ) {}

  /**
   * Opens (or creates) the bucket and renews this node's lease; resolves once the first renewal is
   * stored (trying again until `deadline`, a performance.now() time, then rejecting: the node does
   * not start; none: until it succeeds or the node stops). From then on the lease is renewed every
   * quarter of it, and the fence runs half a lease after the last renewal sent that succeeded.
   */
  async start(deadline = Infinity): Promise<void> {
    this.log.info({ node: this.node }, 'cluster: renewing this node\'s lease before it serves');
    for (;;) {
      // Taken before the request: the key is stored after this, so it lapses a lease after it at the earliest.
      const sentAt = performance.now();
      try {
        const kv = await this.bucket();
        await kv.put(this.node, String(Date.now()));
        this.renewedSince = performance.now();
        this.renewed(sentAt);
        // A survivor's adoption decided from this node's previous run's lapsed key holds no more.
        await this.claims.beginEpoch();
        break;
      } catch (error) {
        if (this.stopped) return;
        const reason = String((error as Error)?.message ?? error);
        if (performance.now() >= deadline) throw new Error(`this node could not renew its lease in the bucket ${NODES_BUCKET}: ${reason}`);
        // Usual for a moment when the bucket was just created (its stream has no leader yet):
        // the reason alone, no stack, for what is expected at start.
        this.log.info({ reason }, 'cluster: this node\'s first lease renewal failed; trying again');
        // A refused request answers at once: the next attempt waits a moment (an unavailable stream answers within its timeout).
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    if (this.stopped) return;
    this.timer = setInterval(() => this.tick(), Math.max(250, Math.floor(this.leaseMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.fenceAt = Infinity;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.fenceTimer !== null) clearTimeout(this.fenceTimer);
    this.fenceTimer = null;
  }

  private async bucket(): Promise<KV> {
    this.kv ??= await new Kvm(this.link.js).create(NODES_BUCKET, { ttl: this.leaseMs, history: 1, replicas: this.replicas });
    return this.kv;
  }

  /** Renewal and the look at the others run apart: a slow look-up (a dead server) never delays a renewal. */
  private tick(): void {
    if (this.stopped) return;
    if (!this.renewing) {
      this.renewing = true;
      // Taken before the request: the key is stored after this, so it lapses a lease after it at the earliest.
      const sentAt = performance.now();
      this.bucket().then((kv) => kv.put(this.node, String(Date.now()))).then(() => {
        this.renewedSince ??= performance.now();
        this.renewed(sentAt);
      }, (error: unknown) => {
        // The stream is unavailable now (quorum lost, a failover): the next renewal tries again.
        this.renewedSince = null;
        this.log.warn({ err: error }, 'cluster: this node\'s lease could not be renewed now');
      }).finally(() => { this.renewing = false; });
    }
    const renewedSince = this.renewedSince;
    // A fenced node adopts nothing: it has not caught up with the claims made while it was away.
    if (!this.checking && !this.claims.fenced && renewedSince !== null && performance.now() - renewedSince >= this.leaseMs) {
      this.checking = true;
      this.bucket().then((kv) => this.adoptFromDeadNodes(kv)).catch((error: unknown) => {
        this.log.warn({ err: error }, 'cluster: the other nodes\' leases could not be read now');
      }).finally(() => { this.checking = false; });
    }
  }

  /**
   * Does this node hold its lease now? False once half a lease has passed since the last renewal
   * sent that succeeded; the node is then fenced at once (a survivor may take it for dead soon).
   * Asked where work begins, before anything is answered, delivered or written (SessionClaims.fenced,
   * the turn writer, the stream applier): one clock read.
   */
  leaseHeld(): boolean {
    if (performance.now() < this.fenceAt) return true;
    this.fence();
    return false;
  }

  /** A renewal sent at `sentAt` succeeded: the fence moves to half a lease after it; a fenced node catches up and serves again. */
  private renewed(sentAt: number): void {
    if (this.stopped) return;
    if (this.lastRenewalSent === null || sentAt > this.lastRenewalSent) this.lastRenewalSent = sentAt;
    this.fenceAt = this.lastRenewalSent + this.leaseMs / 2;
    if (this.fenceTimer !== null) clearTimeout(this.fenceTimer);
    this.fenceTimer = null;
    // Answered after its half lease (sent before a pause): it holds nothing.
    if (!this.leaseHeld()) return;
    this.fenceTimer = setTimeout(() => this.fence(), Math.max(0, this.fenceAt - performance.now()));
    this.fenceTimer.unref();
    if (!this.claims.fenced || this.unfencing) return;
    this.unfencing = true;
    // The claims that moved this node's sessions while it was away are applied before it serves,
    // and a new epoch makes the adoptions decided from its lapsed key and not yet written pass over.
    this.catchUp().then(async (caughtUp) => {
      if (!caughtUp || this.stopped || !this.claims.fenced || this.renewedSince === null) return;
      await this.claims.beginEpoch();
      if (this.stopped || !this.claims.fenced || this.renewedSince === null) return;
      // The fence's half lease after the last renewal answered passed while this caught up (the
      // next renewal hangs): it stays fenced until a renewal is answered, which catches up again.
      if (!this.leaseHeld()) return;
      this.claims.unfence();
      this.log.info({ node: this.node }, 'cluster: this node reached the stream again, caught up and renewed its lease: it serves again (unfenced)');
    }).catch((error: unknown) => {
      // Its new epoch could not be written (the stream failed again): the next renewal tries again.
      this.log.warn({ err: error }, 'cluster: this node could not begin to serve again now');
    }).finally(() => { this.unfencing = false; });
  }

  /**
   * Half a lease without a renewal sent that succeeded (the timer, or leaseHeld() first): a
   * survivor may take this node for dead soon, so it stops serving first.
   */
  private fence(): void {
    if (this.fenceTimer !== null) clearTimeout(this.fenceTimer);
    this.fenceTimer = null;
    if (this.stopped) return;
    // Nobody is judged by this node until its renewals succeed for a whole lease again.
    this.renewedSince = null;
    if (!this.claims.fence()) return;
    this.log.warn({ node: this.node, sinceLastRenewalMs: Math.round(performance.now() - (this.lastRenewalSent ?? 0)), leaseMs: this.leaseMs },
      'cluster: no lease renewal for half a lease: this node is fenced (its connections are closed without wills, CONNECTs refused) until it reaches the stream again');
  }

  /**
   * The sessions of nodes whose lease has lapsed go to the first live node by name, if that is
   * this one (looked at only once this node has renewed its own lease for a whole lease without
   * a failure: see renewedSince). A node whose key this node has never seen (it had not renewed yet when this node
   * started, or it died before) counts as dead only after a whole lease without its key.
   */
  private async adoptFromDeadNodes(kv: KV): Promise<void> {
    const owners = this.claims.watchedNodes();
    owners.delete(this.node);
    if (owners.size === 0) return;
    const maybeAlive = [this.node];
    const dead: string[] = [];
    /** Each node's epoch as known before its key was read: an adoption holds only while it is still the node's. */
    const epochs = new Map<string, string>();
    for (const node of owners) {
      epochs.set(node, this.claims.epochOf(node));
      const entry = await kv.get(node);
      if (entry !== null && entry.operation === 'PUT') {
        this.seen.add(node);
        this.unseenSince.delete(node);
        maybeAlive.push(node);
        continue;
      }
      if (this.seen.has(node)) {
        dead.push(node);
        continue;
      }
      const since = this.unseenSince.get(node) ?? performance.now();
      this.unseenSince.set(node, since);
      if (performance.now() - since >= this.leaseMs) dead.push(node);
      else maybeAlive.push(node);
    }
    // Every node: the word a dead node owed on its connections' wills will not come.
    for (const node of dead) this.claims.nodeGone(node);
    if (dead.length === 0 || maybeAlive.sort()[0] !== this.node || this.stopped) return;
    for (const node of dead) {
      this.handOver(node);
      const sessions = this.claims.ownedBy(node).filter((clientId) => !this.adopting.has(clientId));
      if (sessions.length === 0) continue;
      this.log.info({ node, sessions: sessions.length }, 'cluster: a node\'s lease has lapsed; this node takes over its sessions');
      for (const clientId of sessions) {
        this.adopting.add(clientId);
        this.claims.adopt(clientId, node, epochs.get(node)!).catch((error: unknown) => {
          this.log.warn({ err: error, clientId }, 'cluster: a dead node\'s session could not be claimed now; trying again');
        }).finally(() => this.adopting.delete(clientId));
      }
    }
  }

  /**
   * The dead node's share of the shared subscription groups goes to the live members: its
   * announcements are removed through the stream, so the messages after that removal are picked
   * among the others (a node that restarts announces its members again).
   */
  private handOver(node: string): void {
    if (this.handingOver.has(node)) return;
    this.handingOver.add(node);
    this.claims.handOver(node).then((removed) => {
      if (removed > 0) this.log.info({ node, groups: removed }, 'cluster: a dead node\'s share of the shared subscription groups goes to the live members');
    }, (error: unknown) => {
      this.log.warn({ err: error, node }, 'cluster: a dead node\'s shared group members could not be removed now; trying again');
    }).finally(() => this.handingOver.delete(node));
  }
}
