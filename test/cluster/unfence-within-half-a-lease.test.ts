/**
 * Self-fencing (docs/cluster.md, "Self-fencing"): a node serves only while the last lease renewal
 * that succeeded was sent less than half a lease ago. Unfencing waits for a catch-up with the
 * stream after a successful renewal; if the fence's half lease passes while that catch-up runs
 * (the next renewal hanging, neither answered nor failed), the node must stay fenced: serving
 * then would meet a survivor adopting its sessions (and sending their wills) a lease after that
 * renewal.
 *
 * NodeLiveness runs here against a real nats-server with JetStream, reached through a proxy this
 * test can hold (its bytes wait, nothing is closed: a renewal hangs), with the real SessionClaims;
 * the catch-up is the test's, so that it can end exactly after the fence's time has passed. Every
 * step awaits an event (a renewal answered, the fence timer firing), none a time.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { NodeLiveness } from '../../plugins/cluster-nats/node-liveness';
import { SessionClaims } from '../../plugins/cluster-nats/session-claims';
import { openLink, type ClusterLink } from '../../plugins/cluster-nats/stream';
import type { SessionOwnershipListener } from '../../kernel/messaging/session-ownership';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import { NatsServer } from '../helpers/nats-cluster';

/** A TCP proxy whose traffic can be held (kept, not forwarded, nothing closed) and released. */
class HoldingProxy {
  private held = false;
  private readonly waiting: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number) {}

  get url(): string { return `nats://127.0.0.1:${this.port}`; }

  static async start(targetPort: number): Promise<HoldingProxy> {
    let proxy: HoldingProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new HoldingProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (this.held) this.waiting.push(() => to.write(chunk));
        else to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    for (const write of this.waiting.splice(0)) write();
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Counts an event; `next()` resolves when it happens once more. */
class Signal {
  private fired = 0;
  private readonly waiters: Array<{ at: number; resolve: () => void }> = [];

  fire(): void {
    this.fired++;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.fired >= this.waiters[i].at) this.waiters.splice(i, 1)[0].resolve();
    }
  }

  next(): Promise<void> {
    const at = this.fired + 1;
    return new Promise((resolve) => this.waiters.push({ at, resolve }));
  }
}

const LEASE_MS = 2000;
const quiet = { info: () => undefined, warn: () => undefined };
const noState = { entries: () => [][Symbol.iterator](), get: () => undefined, put: async () => undefined } as unknown as LogStatePort;

describe('cluster: a fenced node serves again only within half a lease of a renewal', function () {
  this.timeout(60_000);
  let nats: NatsServer;
  let proxy: HoldingProxy;
  let link: ClusterLink;

  before(async () => {
    nats = await NatsServer.alone('unfence');
    proxy = await HoldingProxy.start(nats.port);
    // A request deadline far beyond the test: a held renewal hangs, it does not fail.
    link = await openLink({ servers: [proxy.url], node: 'fenced-node', replicas: 1, timeoutMs: 120_000, log: quiet });
  });

  after(async () => {
    proxy?.release();
    await link?.nc.close().catch(() => undefined);
    await proxy?.close();
    await nats?.remove();
  });

  it('stays fenced when its catch-up ends after half a lease without another renewal answered', async () => {
    const claims = new SessionClaims('fenced-node', noState);
    const fencedSignal = new Signal();
    const listener: Partial<SessionOwnershipListener> = {
      fenced: () => fencedSignal.fire(),
      unfenced: () => undefined,
      nodesHoldingState: () => [],
    };
    claims.listen(listener as SessionOwnershipListener);

    let finishCatchUp: (caughtUp: boolean) => void = () => undefined;
    const catchUpAsked = new Signal();
    const liveness = new NodeLiveness(link, 'fenced-node', LEASE_MS, 1, claims, quiet, () => new Promise<boolean>((resolve) => {
      finishCatchUp = resolve;
      catchUpAsked.fire();
    }));
    // Seen from outside: each renewal answered, and each time the fence timer fires.
    const hooks = liveness as unknown as { renewed(sentAt: number): void; fence(): void };
    const renewed = new Signal();
    const fenceFired = new Signal();
    let holdAfterNextRenewal = false;
    const renewedImpl = hooks.renewed.bind(liveness);
    const fenceImpl = hooks.fence.bind(liveness);
    hooks.renewed = (sentAt: number) => {
      renewedImpl(sentAt);
      // Cut off again right after this renewal was answered: the next one hangs.
      if (holdAfterNextRenewal) {
        holdAfterNextRenewal = false;
        proxy.hold();
      }
      renewed.fire();
    };
    hooks.fence = () => {
      fenceImpl();
      fenceFired.fire();
    };

    try {
      const firstRenewal = renewed.next();
      liveness.start();
      await firstRenewal;
      assert.equal(claims.fenced, false);

      // Cut off (renewals hang): fenced half a lease after the last one answered.
      const fenced = fencedSignal.next();
      proxy.hold();
      await fenced;
      assert.equal(claims.fenced, true);

      // Back for one renewal: it is answered (the catch-up starts), then the link hangs again.
      const answered = renewed.next();
      const askedToCatchUp = catchUpAsked.next();
      holdAfterNextRenewal = true;
      proxy.release();
      await answered;
      await askedToCatchUp;
      // Half a lease after that renewal was sent, the fence timer fires (the node is fenced already).
      await fenceFired.next();

      // The catch-up ends only now: the last renewal answered was sent more than half a lease ago.
      finishCatchUp(true);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(claims.fenced, true, 'unfenced although its last answered renewal was sent more than half a lease ago (and no fence timer is left to fence it again)');
    } finally {
      liveness.stop();
    }
  });
});
