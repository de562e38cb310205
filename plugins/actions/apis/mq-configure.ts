/**
 * configureTopic: a topic's transform fields (`transformSteps`, docs/storage.md "Transform fields")
 * and its retention limits, by age (`retentionSeconds`) and by count (`retentionMessages`), set by the message core's command `topic.configure` and kept by the
 * messaging plugin's TopicRetention (plugins/messaging/retention.ts),
 * which trims the topic's oldest messages at once and every 10 s after, never those a session
 * still has to deliver.
 *
 * A limit absent stays as it was; 0 or null removes it. The topic need not exist yet (a policy for
 * a topic to come is fine) but must be a topic name, not a filter. Authorized as `topic.configure`
 * on `topic:<name>`.
 */
import { EngineError } from '../../../kernel/errors';
import { TOPIC_CONFIGURE_COMMAND, type TopicConfigureParams } from '../../../kernel/messaging/commands';
import type { ActionDefinition } from '../action-table';
import { topicNameProblem } from '../../../kernel/topic-name';
import { NAME, schema, type Params } from './db/db-call';
import { checkLocation, MAX_TOPIC_BYTES } from './mq-topics';

const LIMIT = { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

export const configureTopic: ActionDefinition = {
  action: 'configureTopic',
  summary: "Set a topic's retention (the oldest messages beyond an age or a count are trimmed, never those a session still owes) and its transform fields (transformSteps).",
  params: schema({
    databaseName: NAME,
    ownerName: NAME,
    topic: { type: 'string', minLength: 1, maxLength: MAX_TOPIC_BYTES },
    retentionSeconds: LIMIT,
    retentionMessages: LIMIT,
    // Checked by the message core's command (plugins/messaging/topic-configuration.ts) and the log.
    transformSteps: { type: ['array', 'null'] },
  }, ['topic']),
  async handler(call) {
    const p = call.params as Params;
    checkLocation(call, p);
    const topic = p.topic as string;
    const problem = topicNameProblem(topic);
    if (problem !== null) throw new EngineError('INVALID_TOPIC', { topic: topic.slice(0, 64), reason: problem });
    // The message core changes it (plugins/messaging/topic-configuration.ts), authorized as topic.configure.
    if (!call.engine.bus.has(TOPIC_CONFIGURE_COMMAND)) {
      call.engine.authorize(call.ctx!, TOPIC_CONFIGURE_COMMAND, { kind: 'topic', topic });
      throw new EngineError('NOT_AVAILABLE', { feature: 'configureTopic', reason: 'load the messaging plugin' });
    }
    const params: TopicConfigureParams = { topic };
    if (p.retentionSeconds !== undefined) params.retentionSeconds = p.retentionSeconds as number | null;
    if (p.retentionMessages !== undefined) params.retentionMessages = p.retentionMessages as number | null;
    if (p.transformSteps !== undefined) params.transformSteps = p.transformSteps as TopicConfigureParams['transformSteps'];
    return call.engine.bus.execute(TOPIC_CONFIGURE_COMMAND, params, call.ctx!);
  },
};
