/**
 * `$SYS/cluster/...`: figures of the whole cluster, published on every node (docs/cluster.md,
 * "`$SYS`"; docs/mqtt.md). Each node keeps its own `$SYS/broker/...` figures; in a cluster it
 * also writes them, with the time, as shared state (`sys-node/<node>`, one write per node every
 * SYS_INTERVAL_MS), which every node applies. Each node adds up the reports no older than
 * REPORT_FRESH_MS (a node that stopped reporting drops out) and publishes the sums like its own
 * figures: retained, from memory, never stored in the log. A report applied from another node
 * publishes the sums again at once, so a node that joins is counted everywhere within a moment.
 */
import type { Logger } from 'pino';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

export const SYS_REPORT_PREFIX = 'sys-node/';

/** What one node reports. */
export interface NodeReport {
  /** Engine clock ms of the report (the reporting node's clock). */
  at: number;
  uptime: number;
  connected: number;
  received: number;
  sent: number;
  bytesReceived: number;
  bytesSent: number;
  subscriptions: number;
}

export class ClusterSys {
  private scheduled = false;

  constructor(
    readonly node: string,
    private readonly state: LogStatePort,
    private readonly log: Logger,
    /** How long a report counts: a node silent for longer is left out. */
    private readonly freshMs: number,
  ) {}

  /** Writes this node's report (a failure, the stream not taking writes, only delays it to the next round). */
  report(report: NodeReport): void {
    this.state.put(`${SYS_REPORT_PREFIX}${this.node}`, report).catch((error: unknown) => {
      this.log.debug({ err: error }, 'cluster $SYS report not stored; sent again with the next round');
    });
  }

  /**
   * The `$SYS/cluster/...` figures: this node's current report with every other node's last fresh
   * one. `shared`: figures that are the same on every node (the log's, the retained store's).
   */
  figures(own: NodeReport, now: number, shared: { stored: number; retained: number }): Record<string, string> {
    const reports = new Map<string, NodeReport>([[this.node, own]]);
    for (const [key, value] of this.state.entries(SYS_REPORT_PREFIX)) {
      const node = key.slice(SYS_REPORT_PREFIX.length);
      const report = value as NodeReport | undefined;
      if (node === this.node || report === undefined || typeof report.at !== 'number' || now - report.at > this.freshMs) continue;
      reports.set(node, report);
    }
    const sum = (pick: (r: NodeReport) => number): string => String([...reports.values()].reduce((total, r) => total + (Number(pick(r)) || 0), 0));
    const out: Record<string, string> = {
      '$SYS/cluster/nodes': String(reports.size),
      '$SYS/cluster/clients/connected': sum((r) => r.connected),
      '$SYS/cluster/messages/received': sum((r) => r.received),
      '$SYS/cluster/messages/sent': sum((r) => r.sent),
      '$SYS/cluster/messages/stored': String(shared.stored),
      '$SYS/cluster/bytes/received': sum((r) => r.bytesReceived),
      '$SYS/cluster/bytes/sent': sum((r) => r.bytesSent),
      '$SYS/cluster/retained messages/count': String(shared.retained),
    };
    for (const [node, r] of [...reports].sort(([a], [b]) => a.localeCompare(b))) {
      out[`$SYS/cluster/node/${node}/uptime`] = `${r.uptime} seconds`;
      out[`$SYS/cluster/node/${node}/clients/connected`] = String(r.connected);
      out[`$SYS/cluster/node/${node}/messages/received`] = String(r.received);
      out[`$SYS/cluster/node/${node}/messages/sent`] = String(r.sent);
      out[`$SYS/cluster/node/${node}/subscriptions/count`] = String(r.subscriptions);
    }
    return out;
  }

  /** An operations tap: another node's report applied here calls `publish` (once per turn). */
  watcher(publish: () => void): (entry: OperationEntry) => void {
    const own = `${SYS_REPORT_PREFIX}${this.node}`;
    return (entry) => {
      if (entry.op !== 'state.put' || !entry.key.startsWith(SYS_REPORT_PREFIX) || entry.key === own || this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        publish();
      });
    };
  }
}
