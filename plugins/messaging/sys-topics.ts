/**
 * Broker statistics under `$SYS/broker/...` (as Mosquitto names them), published as retained
 * messages every SYS_INTERVAL_MS and at start. They are routed from memory and never stored in
 * the message log, so they create no integration tables (docs/mqtt.md). Subscribing needs a
 * grant that names `$SYS` (`#` does not reach them).
 */
import type { MessageCore } from './message-core';
import { ClusterSys, type NodeReport } from './cluster-sys';

export const SYS_INTERVAL_MS = 10_000;

export class SysTopics {
  private timer?: NodeJS.Timeout;
  /** In a cluster: the `$SYS/cluster/...` figures (cluster-sys.ts). */
  private readonly cluster: ClusterSys | null;
  private untap?: () => void;
  /** The `$SYS/cluster/...` topics published last (those no longer published are cleared). */
  private clusterTopics = new Set<string>();

  constructor(private readonly core: MessageCore) {
    const node = core.engine.settings.cluster_node_name;
    this.cluster = node === null || node === undefined ? null : new ClusterSys(node, core.messageLog.state, core.log, 3 * SYS_INTERVAL_MS);
  }

  start(): void {
    this.publishAll();
    this.timer = setInterval(() => this.publishAll(), SYS_INTERVAL_MS).unref();
    if (this.cluster !== null) this.untap = this.core.engine.need('storage').operations.tap(this.cluster.watcher(() => this.publishCluster()));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.untap?.();
  }

  /** The current figures, by topic. */
  figures(): Record<string, string> {
    const core = this.core;
    const { connected, total: sessions } = core.sessionCounts();
    const { stats } = core;
    return {
      '$SYS/broker/version': `engine ${core.engine.version}`,
      '$SYS/broker/uptime': `${Math.floor((core.engine.clock.now() - core.startedAt) / 1000)} seconds`,
      '$SYS/broker/clients/connected': String(connected),
      '$SYS/broker/clients/disconnected': String(sessions - connected),
      '$SYS/broker/clients/total': String(sessions),
      '$SYS/broker/messages/received': String(stats.messagesReceived),
      '$SYS/broker/messages/sent': String(stats.messagesSent),
      '$SYS/broker/messages/stored': String(core.storedMessages()),
      '$SYS/broker/bytes/received': String(stats.bytesReceived),
      '$SYS/broker/bytes/sent': String(stats.bytesSent),
      '$SYS/broker/subscriptions/count': String(core.tree.size),
      '$SYS/broker/retained messages/count': String(core.retained.size),
    };
  }

  private publishAll(): void {
    for (const [topic, value] of Object.entries(this.figures())) this.publishOne(topic, value);
    if (this.cluster !== null) {
      this.cluster.report(this.report());
      this.publishCluster();
    }
  }

  /** This node's figures as it reports them to the others. */
  private report(): NodeReport {
    const core = this.core;
    const now = core.engine.clock.now();
    const { stats } = core;
    return {
      at: now,
      uptime: Math.floor((now - core.startedAt) / 1000),
      connected: core.sessionCounts().connected,
      received: stats.messagesReceived,
      sent: stats.messagesSent,
      bytesReceived: stats.bytesReceived,
      bytesSent: stats.bytesSent,
      subscriptions: core.tree.size,
    };
  }

  /** The `$SYS/cluster/...` figures; a node's topics left over from a node that dropped out are cleared. */
  private publishCluster(): void {
    const core = this.core;
    const figures = this.cluster!.figures(this.report(), core.engine.clock.now(), {
      stored: core.storedMessages(),
      retained: core.retained.size - core.retained.list('$SYS/').length,
    });
    const published = new Set(Object.keys(figures));
    for (const topic of this.clusterTopics) if (!published.has(topic)) this.publishOne(topic, '');
    this.clusterTopics = published;
    for (const [topic, value] of Object.entries(figures)) this.publishOne(topic, value);
  }

  private publishOne(topic: string, value: string): void {
    this.core.publish({
      topic, payload: Buffer.from(value), qos: 0, retain: true, publisher: null, createdAt: this.core.engine.clock.now(), sequence: 0, wire: undefined, wireForm: 0,
    });
  }
}
