/**
 * Topic retention (configureTopic): per-topic limits by age and by count that trim the message
 * log's oldest messages of the topic, every RUN_INTERVAL_MS and at once after a change.
 *
 * A trim never takes a message a session still has to deliver: an offline or lagging session
 * subscribed to the topic has been offered every message up to its position and no further, so
 * the trim stops there (an online live session is offered messages as they are routed: it owes
 * nothing but its in-flight ones, which stay for a resend on reconnect [MQTT-4.4.0-1]). The
 * topic's retained message stays too. What was held back, and by whom, is in `status`.
 *
 * Policies are kept in the log's state store (`topic-config/<topic>`) and loaded at start.
 *
 * Limits for the whole log (docs/operations.md "A full disk and the log's size"):
 * - `log_default_retention_seconds`: the age limit of every topic without a policy of its own;
 * - `log_max_bytes`: when the log takes more, each run trims its oldest messages (in log order,
 *   whatever their topic) down to 90% of the limit, holding back what a session still owes as
 *   above. Held-back messages are kept and counted, and the limit is reported (`logStatus`, and
 *   one warning when it starts and one when it ends, not one per run).
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { parseSharedFilter, topicMatches } from '../../kernel/auth/topic-filter';
import type { LoggedMessage, MessageLogPort } from '../../kernel/storage/message-log-port';
import { timestampToMs } from '../../lib/values/timestamps';
import type { MessageCore } from './message-core';
import type { LogSizeStatus, RetentionPolicy, RetentionStatus, TopicRetentionPort, TopicTrim } from '../../kernel/messaging/commands';
import { topicNameProblem } from '../../kernel/topic-name';

export type { RetentionPolicy, RetentionStatus, TopicTrim } from '../../kernel/messaging/commands';

const CONFIG_PREFIX = 'topic-config/';
const RUN_INTERVAL_MS = 10_000;
/** Messages read per step when finding the age limit's boundary. */
const AGE_SCAN_CHUNK = 1000;
/** A run over `log_max_bytes` trims down to this share of it (not to just under: every run would trim). */
const LOG_TRIM_TO = 0.9;
/** What a message costs in the log besides its payload and topic (header, times, index): an estimate. */
const MESSAGE_OVERHEAD_BYTES = 48;

/** The limits for the whole log (settings). */
export interface LogLimits {
  /** The age limit of topics without a policy (0: none). */
  defaultRetentionSeconds: number;
  /** The most bytes the log may take (0: no limit). */
  maxBytes: number;
}

interface Warner {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

function approximateBytes(m: LoggedMessage): number {
  const p = m.payload;
  const payload = p.type === 'binary' ? p.value.byteLength : p.type === 'boolean' ? 1 : p.value.length;
  return payload + m.topic.length + MESSAGE_OVERHEAD_BYTES;
}

function isPolicy(value: unknown): value is RetentionPolicy {
  return value !== null && typeof value === 'object';
}

function cleanPolicy(policy: RetentionPolicy): RetentionPolicy {
  const out: RetentionPolicy = {};
  if (policy.maxAgeSeconds !== undefined && policy.maxAgeSeconds > 0) out.maxAgeSeconds = policy.maxAgeSeconds;
  if (policy.maxMessages !== undefined && policy.maxMessages > 0) out.maxMessages = policy.maxMessages;
  return out;
}

export class TopicRetention implements TopicRetentionPort {
  private readonly policies = new Map<string, RetentionPolicy>();
  private readonly trimmedTotals = new Map<string, number>();
  private readonly heldBack = new Map<string, string[]>();
  /** Runs one after another (the timer's and configure's). */
  private running: Promise<unknown> = Promise.resolve();

  private readonly defaultPolicy: RetentionPolicy | undefined;
  private readonly size: LogSizeStatus;

  constructor(
    private readonly log: MessageLogPort,
    private readonly core: MessageCore | undefined,
    limits: LogLimits = { defaultRetentionSeconds: 0, maxBytes: 0 },
    private readonly warner?: Warner,
  ) {
    this.defaultPolicy = limits.defaultRetentionSeconds > 0 ? { maxAgeSeconds: limits.defaultRetentionSeconds } : undefined;
    this.size = { maxBytes: limits.maxBytes, bytes: 0, overLimit: false, trimmedMessages: 0, keptOwedMessages: 0, heldBackBy: [] };
  }

  /** The log's size against `log_max_bytes` as of the last run. */
  logStatus(): LogSizeStatus {
    return { ...this.size, bytes: this.log.byteSize(), heldBackBy: [...this.size.heldBackBy] };
  }

  /** Loads the stored policies. */
  load(): void {
    for (const [key, value] of this.log.state.entries(CONFIG_PREFIX)) {
      if (isPolicy(value)) this.policies.set(key.slice(CONFIG_PREFIX.length), cleanPolicy(value));
    }
  }

  /**
   * Sets a topic's policy (a limit absent or 0: none; both none: the policy is removed), durable
   * when it resolves. Throws INVALID_TOPIC for a topic filter or another invalid name.
   */
  async configure(topic: string, policy: RetentionPolicy): Promise<RetentionPolicy | null> {
    const problem = topicNameProblem(topic);
    if (problem !== null) throw new EngineError('INVALID_TOPIC', { topic, reason: problem });
    const clean = cleanPolicy(policy);
    if (clean.maxAgeSeconds === undefined && clean.maxMessages === undefined) {
      this.policies.delete(topic);
      this.heldBack.delete(topic);
      await this.log.state.remove(`${CONFIG_PREFIX}${topic}`);
      return null;
    }
    this.policies.set(topic, clean);
    await this.log.state.put(`${CONFIG_PREFIX}${topic}`, clean);
    return clean;
  }

  get(topic: string): RetentionPolicy | undefined {
    return this.policies.get(topic);
  }

  status(topic: string): RetentionStatus {
    return {
      policy: this.policies.get(topic) ?? null,
      trimmedMessages: this.trimmedTotals.get(topic) ?? 0,
      heldBackBy: this.heldBack.get(topic) ?? [],
    };
  }

  /**
   * Trims every topic with a policy, or the default one (or only `topics`), as of `now` (engine
   * clock ms); then, on a run over every topic, the log down under `log_max_bytes`.
   */
  run(now: number, topics?: string[]): Promise<TopicTrim[]> {
    const next = this.running.then(async () => {
      const results: TopicTrim[] = [];
      const named = topics ?? (this.defaultPolicy ? this.log.listTopics().map((info) => info.topic) : [...this.policies.keys()]);
      for (const topic of named) {
        const policy = this.policies.get(topic) ?? this.defaultPolicy;
        if (policy) results.push(await this.trim(topic, policy, now));
      }
      if (topics === undefined) await this.limitLogSize();
      return results;
    });
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Resolves once the run under way (if any) has ended. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async trim(topic: string, policy: RetentionPolicy, now: number): Promise<TopicTrim> {
    const wanted = Math.max(this.countBoundary(topic, policy), await this.ageBoundary(topic, policy, now));
    const { upTo, heldBackBy } = this.holdBack(topic, wanted);
    const retained = this.core?.retainedSequence(topic);
    const trimmed = upTo > 0 ? await this.log.trimTopic(topic, upTo, retained) : 0;
    if (trimmed > 0) this.trimmedTotals.set(topic, (this.trimmedTotals.get(topic) ?? 0) + trimmed);
    if (this.policies.has(topic)) this.heldBack.set(topic, heldBackBy);
    return { topic, trimmed, wanted, upTo, heldBackBy };
  }

  /** The highest sequence beyond the newest maxMessages (0: none). */
  private countBoundary(topic: string, policy: RetentionPolicy): number {
    if (policy.maxMessages === undefined) return 0;
    const excess = this.log.countTopic(topic) - policy.maxMessages;
    if (excess <= 0) return 0;
    // Read whichever end is shorter: usually the few messages published since the last run.
    const boundary: LoggedMessage | undefined = excess <= policy.maxMessages
      ? this.log.readTopic(topic, { limit: excess }).at(-1)
      : this.log.readTopic(topic, { limit: policy.maxMessages + 1, reverse: true }).at(-1);
    return boundary?.sequence ?? 0;
  }

  /** The highest sequence created before now − maxAgeSeconds (0: none); create_ts never goes back along the log. */
  private async ageBoundary(topic: string, policy: RetentionPolicy, now: number): Promise<number> {
    if (policy.maxAgeSeconds === undefined) return 0;
    const cutoff = now - policy.maxAgeSeconds * 1000;
    let boundary = 0;
    for (;;) {
      const chunk = this.log.readTopic(topic, { from: boundary + 1, limit: AGE_SCAN_CHUNK });
      for (const message of chunk) {
        if (timestampToMs(message.createTs) >= cutoff) return boundary;
        boundary = message.sequence;
      }
      if (chunk.length < AGE_SCAN_CHUNK) return boundary;
      await new Promise<void>((resolve) => setImmediate(resolve)); // the broker shares the event loop
    }
  }

  /**
   * Over `log_max_bytes`: trims the log's oldest messages, in log order, until what they take
   * (estimated from their payloads) brings the log to LOG_TRIM_TO of the limit; what a session
   * still owes stays, counted in `keptOwedMessages` with the clients in `heldBackBy`.
   */
  private async limitLogSize(): Promise<void> {
    const status = this.size;
    if (!(status.maxBytes > 0)) return;
    const bytes = this.log.byteSize();
    status.bytes = bytes;
    if (bytes <= status.maxBytes) {
      if (status.overLimit) this.warner?.info({ bytes, maxBytes: status.maxBytes }, 'message log: back under log_max_bytes');
      status.overLimit = false;
      status.keptOwedMessages = 0;
      status.heldBackBy = [];
      return;
    }
    const excess = bytes - Math.floor(status.maxBytes * LOG_TRIM_TO);
    // The boundary: the oldest messages of the whole log that make up the excess.
    let freed = 0;
    let boundary = 0;
    const topics = new Set<string>();
    for (let after = 0; freed < excess;) {
      const chunk = this.log.readFrom(after, AGE_SCAN_CHUNK);
      for (const message of chunk) {
        freed += approximateBytes(message);
        boundary = message.sequence;
        topics.add(message.topic);
        if (freed >= excess) break;
      }
      if (chunk.length < AGE_SCAN_CHUNK) break;
      after = chunk[chunk.length - 1].sequence;
      await new Promise<void>((resolve) => setImmediate(resolve)); // the broker shares the event loop
    }
    let kept = 0;
    const heldBackBy = new Set<string>();
    for (const topic of topics) {
      const { upTo, heldBackBy: by } = this.holdBack(topic, boundary);
      const retained = this.core?.retainedSequence(topic);
      const trimmed = upTo > 0 ? await this.log.trimTopic(topic, upTo, retained) : 0;
      status.trimmedMessages += trimmed;
      if (trimmed > 0) this.trimmedTotals.set(topic, (this.trimmedTotals.get(topic) ?? 0) + trimmed);
      if (upTo < boundary) {
        kept += this.log.countTopic(topic, upTo + 1) - this.log.countTopic(topic, boundary + 1);
        for (const client of by) heldBackBy.add(client);
      }
    }
    const wasKeeping = status.keptOwedMessages > 0;
    status.overLimit = true;
    status.keptOwedMessages = kept;
    status.heldBackBy = [...heldBackBy].sort();
    if (kept > 0 && !wasKeeping) {
      this.warner?.warn({ bytes, maxBytes: status.maxBytes, keptOwedMessages: kept, heldBackBy: status.heldBackBy },
        'message log: over log_max_bytes; messages sessions still owe are kept, not dropped');
    }
  }

  /** Lowers the trim to what no session still owes; who held it back. */
  private holdBack(topic: string, wanted: number): { upTo: number; heldBackBy: string[] } {
    let upTo = wanted;
    const heldBackBy: string[] = [];
    if (wanted <= 0 || !this.core) return { upTo: Math.max(0, upTo), heldBackBy };
    for (const session of this.core.sessions.values()) {
      let owes = Infinity;
      if ((!session.online || session.lagging) && this.subscribed(session.subscriptions.keys(), topic)) owes = session.position;
      // In flight (sent, not acknowledged): resent from the log on reconnect [MQTT-4.4.0-1].
      if (session.inflightCount > 0) {
        for (const entry of session.inflight.values()) {
          if (entry.sequence <= Math.min(wanted, owes) && (entry.message?.topic ?? this.log.read(entry.sequence)?.topic) === topic) {
            owes = entry.sequence - 1;
          }
        }
      }
      if (owes < wanted) {
        upTo = Math.min(upTo, owes);
        heldBackBy.push(session.clientId);
      }
    }
    return { upTo: Math.max(0, upTo), heldBackBy: heldBackBy.sort() };
  }

  private subscribed(filters: Iterable<string>, topic: string): boolean {
    for (const subscribed of filters) {
      const filter = parseSharedFilter(subscribed)?.filter ?? subscribed;
      if (topicMatches(filter, topic)) return true;
    }
    return false;
  }
}

/**
 * Starts retention for the message core: policies loaded, a coarse timer (unref'd: it keeps no
 * process alive) stopped at close, after the run under way.
 */
export function startRetention(engine: Engine, core: MessageCore): TopicRetention {
  const log = core.log.child({ part: 'retention' });
  const limits = { defaultRetentionSeconds: engine.settings.log_default_retention_seconds, maxBytes: engine.settings.log_max_bytes };
  const retention = new TopicRetention(engine.need('storage').messageLog, core, limits, log);
  retention.load();
  const timer = setInterval(() => {
    retention.run(engine.clock.now()).catch((error: unknown) => log.error({ err: error }, 'retention run failed'));
  }, RUN_INTERVAL_MS);
  timer.unref();
  engine.onClose(async () => {
    clearInterval(timer);
    await retention.idle();
  });
  return retention;
}
