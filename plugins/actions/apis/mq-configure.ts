/**
 * configureTopic: a topic's retention limits, by age (`retentionSeconds`) and by count
 * (`retentionMessages`), kept by the messaging plugin's TopicRetention (plugins/messaging/retention.ts),
 * which trims the topic's oldest messages at once and every 10 s after, never those a session
 * still has to deliver.
 *
 * A limit absent stays as it was; 0 or null removes it. The topic need not exist yet (a policy for
 * a topic to come is fine) but must be a topic name, not a filter. Authorized as `topic.configure`
 * on `topic:<name>`.
 */
import { EngineError } from '../../../kernel/errors';
import type { ActionDefinition } from '../action-table';
import type { RetentionPolicy } from '../../messaging/retention';
import { topicNameProblem } from '../../../kernel/topic-name';
import { NAME, schema, type Params } from './db/db-call';
import { checkLocation, MAX_TOPIC_BYTES } from './mq-topics';

const LIMIT = { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** The new value of one limit: the given one (0 or null: none), or the current one when absent. */
function limit(given: unknown, current: number | undefined): number | undefined {
  if (given === undefined) return current;
  return given === null || given === 0 ? undefined : (given as number);
}

export const configureTopic: ActionDefinition = {
  action: 'configureTopic',
  summary: "Set a topic's retention: the oldest messages beyond an age or a count are trimmed (never those a session still owes).",
  params: schema({
    databaseName: NAME,
    ownerName: NAME,
    topic: { type: 'string', minLength: 1, maxLength: MAX_TOPIC_BYTES },
    retentionSeconds: LIMIT,
    retentionMessages: LIMIT,
  }, ['topic']),
  async handler(call) {
    const p = call.params as Params;
    checkLocation(call, p);
    const topic = p.topic as string;
    const problem = topicNameProblem(topic);
    if (problem !== null) throw new EngineError('INVALID_TOPIC', { topic: topic.slice(0, 64), reason: problem });
    call.engine.authorize(call.ctx!, 'topic.configure', { kind: 'topic', topic });
    if (!call.engine.has('topicRetention')) {
      throw new EngineError('NOT_AVAILABLE', { feature: 'configureTopic', reason: 'load the messaging plugin' });
    }
    const retention = call.engine.need('topicRetention');
    const current = retention.get(topic);
    const policy: RetentionPolicy = {
      maxAgeSeconds: limit(p.retentionSeconds, current?.maxAgeSeconds),
      maxMessages: limit(p.retentionMessages, current?.maxMessages),
    };
    const stored = await retention.configure(topic, policy);
    // Trim at once, so the answer's limits already hold (the timer keeps them after).
    await retention.run(call.engine.clock.now(), [topic]);
    return { topic, retentionSeconds: stored?.maxAgeSeconds ?? null, retentionMessages: stored?.maxMessages ?? null };
  },
};
