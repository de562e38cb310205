/**
 * Shared subscriptions once per group across a cluster (docs/cluster.md, "Shared subscriptions").
 *
 * Each node delivers a group's messages to its own members (routing.ts, catch-up.ts); this file
 * decides, for each message and group, whether THIS node is the one that delivers it. No
 * agreement of our own: every node applies the same stream entries in the same order, so
 *
 * - each node announces how many members it holds in each group as shared state
 *   (`share-members/<node>/<share>/<filter>` → count, an operation entry like any state write);
 * - every node sees those entries while they are applied (`operations.tap`), in stream order, and
 *   notes where each stands among the messages (`messageLog.assignedSequence()`, the same on every
 *   node): a change counts for the messages numbered after it;
 * - for message S, every node computes the same member count per node and picks the same node,
 *   by a hash of S over the members (nodes holding more members get more messages).
 *
 * A node delivers message S to a group only when the membership in force at S, as applied from
 * the stream, picks it. Where a node does not know that membership (S is numbered before the
 * group's first announcement, or before this process loaded the announcements), or it counts no
 * member, nobody is picked: a message is never delivered twice, and a new member's SUBACK waits
 * until its announcement is applied (`announced`), so every message published after it is
 * covered. A node picked for a message it has no member for (its last member left, the
 * withdrawal not yet applied) drops it. A node that died keeps its share until the survivor that
 * adopts its sessions removes its announcements (`removeNode`, once its lease lapsed); a node whose announcement was
 * removed while it still holds members (it restarted, or was only cut off) announces them again.
 */
import type { Engine } from '../../kernel/engine';
import type { LogStatePort, MessageLogPort } from '../../kernel/storage/message-log-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { logStoreFailure } from './store-failure-log';
import type { Logger } from 'pino';

/** State keys of the announcements: `share-members/<node>/<share>/<filter>`. */
export const SHARE_MEMBERS_PREFIX = 'share-members/';
/**
 * Membership versions kept per group at most. Those no delivery can look up any more (older than
 * the router's and every lagging group's position: `oldestNeeded`) go first; past this bound the
 * oldest goes, and a catch-up of a message older than the oldest kept delivers it to nobody.
 */
const VERSIONS_KEPT = 1024;

/** The group members of every node from some message on. */
interface Version {
  /** Counts for messages with a sequence above this. */
  after: number;
  /** Nodes with members, sorted by name, and their counts. */
  nodes: string[];
  counts: number[];
  total: number;
}

/** What a group is known by: share name and filter. */
function groupKey(share: string, filter: string): string {
  return `${share}/${filter}`;
}

/** Spreads consecutive sequences evenly (a group matching every 3rd message still meets every node). */
function mix(sequence: number): number {
  let h = Math.imul(sequence ^ (sequence >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) >>> 0;
}

export class ClusterShares {
  /** group key → membership versions, oldest first. */
  private readonly versions = new Map<string, Version[]>();
  /** group key → node → count: the latest applied announcements. */
  private readonly current = new Map<string, Map<string, number>>();
  /** This node's members per group, as its subscription tree holds them. */
  private readonly local = new Map<string, { share: string; filter: string; count: number }>();
  /** Groups whose local count is to be announced (next turn, or again after a failed write). */
  private readonly unannounced = new Set<string>();
  private flushScheduled = false;
  /** Told once the writes of the next flush have settled (announced()). */
  private afterNextFlush: Array<() => void> = [];
  /** The writes of the last flush, until they settle. */
  private writing: Promise<void> | null = null;
  private untap: (() => void) | null = null;
  private readonly state: LogStatePort;
  /** The lowest position a delivery of this node may still go on from (the router's, a lagging group's): set by the message core. */
  oldestNeeded: () => number = () => 0;

  constructor(
    private readonly node: string,
    private readonly messageLog: MessageLogPort,
    private readonly log: Logger,
  ) {
    this.state = messageLog.state;
  }

  /** In a cluster (cluster_node_name set): the shares, else null (a single node delivers every group itself). */
  static forEngine(engine: Engine, messageLog: MessageLogPort, log: Logger): ClusterShares | null {
    const node = engine.settings.cluster_node_name;
    if (node === null || node === undefined) return null;
    const shares = new ClusterShares(node, messageLog, log);
    shares.untap = engine.need('storage').operations.tap((entry) => shares.applied(entry));
    return shares;
  }

  /**
   * After the sessions are loaded: the stored announcements are the membership for every message
   * from here on, and this node's own are made to match what it holds now (members of sessions
   * that ended with the last run are gone).
   */
  load(): void {
    // The membership as it stands now counts for messages numbered after the last one applied;
    // older ones (a restarted node learns no history) get an unknown membership: see mine().
    const after = this.messageLog.assignedSequence();
    for (const [key, value] of this.state.entries(SHARE_MEMBERS_PREFIX)) this.note(key, typeof value === 'number' ? value : 0, after);
    const own = `${SHARE_MEMBERS_PREFIX}${this.node}/`;
    for (const [key] of this.state.entries(own)) {
      const group = key.slice(own.length);
      if (!this.local.has(group)) this.unannounced.add(group);
    }
    this.scheduleFlush();
  }

  close(): void {
    this.untap?.();
    this.untap = null;
  }

  /** The subscription tree's group on this node changed size (subscription-tree.ts). */
  readonly groupSize = (share: string, filter: string, count: number): void => {
    const key = groupKey(share, filter);
    if (count === 0) this.local.delete(key);
    else this.local.set(key, { share, filter, count });
    this.unannounced.add(key);
    this.scheduleFlush();
  };

  /** The nodes whose announcements are applied now (their leases are watched: docs/cluster.md). */
  nodes(): Set<string> {
    const nodes = new Set<string>();
    for (const members of this.current.values()) for (const node of members.keys()) nodes.add(node);
    return nodes;
  }

  /**
   * A dead node's announcements are removed through the log (by the one survivor that adopts its
   * sessions): the messages numbered after the removal are picked among the live members.
   * Resolves with how many were removed, once they are applied here.
   */
  async removeNode(node: string): Promise<number> {
    const keys: string[] = [];
    for (const [group, members] of this.current) if (members.has(node)) keys.push(`${SHARE_MEMBERS_PREFIX}${node}/${group}`);
    await Promise.all(keys.map((key) => this.state.remove(key)));
    return keys.length;
  }

  /**
   * Is this node the one that delivers message `sequence` to the group? (`$SYS`, sequence 0: each
   * node its own.) Only the membership in force at the message decides, the same on every node:
   * when this node does not know it (no announcement applied before the message, or the message
   * predates what this process loaded or keeps) or it counts no member, no node delivers it.
   */
  mine(share: string, filter: string, sequence: number): boolean {
    if (sequence === 0) return true;
    const versions = this.versions.get(groupKey(share, filter));
    if (versions === undefined) return false;
    let version: Version | undefined;
    for (let i = versions.length - 1; i >= 0; i--) {
      if (versions[i].after < sequence) { version = versions[i]; break; }
    }
    if (version === undefined || version.total === 0) return false;
    let pick = mix(sequence) % version.total;
    for (let i = 0; i < version.nodes.length; i++) {
      pick -= version.counts[i];
      if (pick < 0) return version.nodes[i] === this.node;
    }
    return false;
  }

  /**
   * Resolves once this node's membership changes made so far are applied from the stream (at
   * once: undefined), whether their writes succeeded or not. A SUBACK for a shared subscription
   * waits for it: a message published after the SUBACK is numbered after the announcement, so
   * the member's node counts for it.
   */
  announced(): Promise<void> | undefined {
    if (this.flushScheduled) return new Promise((resolve) => this.afterNextFlush.push(resolve));
    return this.writing ?? undefined;
  }

  /** Every entry this node applies, in stream order: announcements change the membership from here on. */
  private applied(entry: OperationEntry): void {
    if (entry.op === 'state.put') {
      if (entry.key.startsWith(SHARE_MEMBERS_PREFIX)) this.note(entry.key, typeof entry.value === 'number' ? entry.value : 0, this.messageLog.assignedSequence());
    } else if (entry.op === 'state.remove') {
      if (!entry.key.startsWith(SHARE_MEMBERS_PREFIX)) return;
      this.note(entry.key, 0, this.messageLog.assignedSequence());
      // This node's own announcement removed by another (it was taken for dead) while it holds
      // members: they are announced again.
      const own = `${SHARE_MEMBERS_PREFIX}${this.node}/`;
      if (entry.key.startsWith(own) && this.local.has(entry.key.slice(own.length))) {
        this.unannounced.add(entry.key.slice(own.length));
        this.scheduleFlush();
      }
    }
  }

  /** One announcement (`share-members/<node>/<group>` → count), counting for messages after `after`. */
  private note(key: string, count: number, after: number): void {
    const rest = key.slice(SHARE_MEMBERS_PREFIX.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) return;
    const node = rest.slice(0, slash);
    const group = rest.slice(slash + 1);
    let nodes = this.current.get(group);
    if (nodes === undefined) this.current.set(group, nodes = new Map());
    if (count > 0) nodes.set(node, count);
    else nodes.delete(node);
    const names = [...nodes.keys()].sort();
    const counts = names.map((name) => nodes.get(name)!);
    const version: Version = { after, nodes: names, counts, total: counts.reduce((a, b) => a + b, 0) };
    let versions = this.versions.get(group);
    if (versions === undefined) this.versions.set(group, versions = []);
    // Several announcements at one place in the log: the last one holds.
    if (versions.length > 0 && versions[versions.length - 1].after === after) versions[versions.length - 1] = version;
    else versions.push(version);
    // A message S is looked up only above oldestNeeded(): a version followed by one in force there is never read again.
    const needed = this.oldestNeeded();
    while (versions.length > 1 && versions[1].after <= needed) versions.shift();
    if (versions.length > VERSIONS_KEPT) versions.shift();
    if (nodes.size === 0 && versions.every((v) => v.total === 0)) {
      this.current.delete(group);
      this.versions.delete(group);
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.unannounced.size === 0) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes this node's changed counts, one state write per group (a turn's changes at once). */
  private flush(): void {
    this.flushScheduled = false;
    const groups = [...this.unannounced];
    this.unannounced.clear();
    const writes: Array<Promise<void>> = [];
    for (const group of groups) {
      const key = `${SHARE_MEMBERS_PREFIX}${this.node}/${group}`;
      const count = this.local.get(group)?.count ?? 0;
      const written = count > 0 ? this.state.put(key, count) : this.state.remove(key);
      writes.push(written.catch((error: unknown) => {
        // Not stored (the stream cannot take writes now): announced again by the sweep.
        logStoreFailure(this.log, error, { group }, 'the shared group membership could not be announced; trying again');
        this.unannounced.add(group);
      }));
    }
    const waiting = this.afterNextFlush;
    this.afterNextFlush = [];
    const settled = Promise.all(writes).then(() => {
      if (this.writing === settled) this.writing = null;
      for (const resolve of waiting) resolve();
    });
    this.writing = settled;
  }

  /** The sweep: announcements that failed are written again. */
  retry(): void {
    this.scheduleFlush();
  }
}
