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
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { parseSharedFilter, topicMatches } from '../../kernel/auth/topic-filter';
import type { LoggedMessage, MessageLogPort } from '../../kernel/storage/message-log-port';
import { timestampToMs } from '../../lib/values/timestamps';
import type { MessageCore } from './message-core';
import type { RetentionPolicy, RetentionStatus, TopicRetentionPort, TopicTrim } from '../../kernel/messaging/commands';
import { topicNameProblem } from '../../kernel/topic-name';

export type { RetentionPolicy, RetentionStatus, TopicTrim } from '../../kernel/messaging/commands';

const CONFIG_PREFIX = 'topic-config/';
const RUN_INTERVAL_MS = 10_000;
/** Messages read per step when finding the age limit's boundary. */
const AGE_SCAN_CHUNK = 1000;

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

  constructor(private readonly log: MessageLogPort, private readonly core: MessageCore | undefined) {}

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

  /** Trims every topic with a policy (or only `topics`) as of `now` (engine clock ms). */
  run(now: number, topics?: string[]): Promise<TopicTrim[]> {
    const next = this.running.then(async () => {
      const results: TopicTrim[] = [];
      for (const topic of topics ?? [...this.policies.keys()]) {
        const policy = this.policies.get(topic);
        if (policy) results.push(await this.trim(topic, policy, now));
      }
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
  const retention = new TopicRetention(engine.need('storage').messageLog, core);
  retention.load();
  const log = core.log.child({ part: 'retention' });
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
