/**
 * Broker statistics under `$SYS/broker/...` (as Mosquitto names them), published as retained
 * messages every SYS_INTERVAL_MS and at start. They are routed from memory and never stored in
 * the message log, so they create no integration tables (docs/mqtt.md). Subscribing needs a
 * grant that names `$SYS` (`#` does not reach them).
 */
import type { MessageCore } from './message-core';

export const SYS_INTERVAL_MS = 10_000;

export class SysTopics {
  private timer?: NodeJS.Timeout;

  constructor(private readonly core: MessageCore) {}

  start(): void {
    this.publishAll();
    this.timer = setInterval(() => this.publishAll(), SYS_INTERVAL_MS).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
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
    const now = this.core.engine.clock.now();
    for (const [topic, value] of Object.entries(this.figures())) {
      this.core.publish({
        topic, payload: Buffer.from(value), qos: 0, retain: true, publisher: null, createdAt: now, sequence: 0,
      });
    }
  }
}
