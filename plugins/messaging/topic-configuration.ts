/**
 * `topic.configure`: the one way a topic's configuration (its retention limits) changes. The
 * configureTopic action runs it; authorized on `topic:<name>` like `table.alter` on its
 * integration table (kernel/auth/resource-aliases.ts). The limits hold at once: the topic is
 * trimmed before the answer, and every 10 s after by TopicRetention.
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { topicNameProblem } from '../../kernel/topic-name';
import {
  TOPIC_CONFIGURE_COMMAND, type LogSizeStatus, type RetentionPolicy, type TopicConfigureParams, type TopicConfigureResult, type TransformStep,
} from '../../kernel/messaging/commands';
import type { TransformFieldInput, TransformStatus } from '../../kernel/storage/message-log-port';
import type { TopicRetention } from './retention';

const LIMIT = { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** The product's transform steps (docs/actions.md, "configureTopic"); the fields are checked by the log. */
const TRANSFORM_STEPS = {
  type: ['array', 'null'],
  items: {
    type: 'object', required: ['transformStepMethod', 'mapOfPropertiesToFields'],
    properties: {
      transformStepMethod: { type: 'string' },
      transformStepName: { type: 'string', maxLength: 250 },
      mapOfPropertiesToFields: { type: 'array' },
    },
  },
} as const;

/** The fields the steps declare, in order; only `jsonToTableFields` steps exist here. */
function fieldsOf(steps: TransformStep[] | null): TransformFieldInput[] {
  const fields: TransformFieldInput[] = [];
  (steps ?? []).forEach((step, i) => {
    if (step.transformStepMethod !== 'jsonToTableFields') {
      throw new EngineError('INVALID_PARAMETER', {
        param: `transformSteps[${i}].transformStepMethod`, reason: 'the one transform method supported is "jsonToTableFields"',
      });
    }
    fields.push(...step.mapOfPropertiesToFields);
  });
  return fields;
}

/** The fields in force as the answer's steps (one step, or none). */
function stepsOf(status: TransformStatus | undefined): TransformStep[] {
  if (status === undefined || status.fields.length === 0) return [];
  return [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: status.fields }];
}

const IDLE: TransformStatus['backfill'] = { state: 'idle', messagesDone: 0, messagesTotal: 0 };

/** The new value of one limit: the given one (0 or null: none), or the current one when absent. */
function limit(given: number | null | undefined, current: number | undefined): number | undefined {
  if (given === undefined) return current;
  return given === null || given === 0 ? undefined : given;
}

export function registerTopicConfiguration(engine: Engine, retention: TopicRetention): void {
  engine.bus.register<TopicConfigureParams, TopicConfigureResult>({
    name: TOPIC_CONFIGURE_COMMAND,
    summary: "Set a topic's retention (the oldest messages beyond an age or a count are trimmed, never those a session still owes) and its transform fields.",
    params: {
      type: 'object', required: ['topic'], additionalProperties: false,
      properties: {
        topic: { type: 'string', minLength: 1, maxLength: 65_500 }, retentionSeconds: LIMIT, retentionMessages: LIMIT, transformSteps: TRANSFORM_STEPS,
      },
    },
    resource: (p) => ({ kind: 'topic', topic: p.topic }),
    handler: async (p) => {
      const topic = p.topic;
      const problem = topicNameProblem(topic);
      if (problem !== null) throw new EngineError('INVALID_TOPIC', { topic: topic.slice(0, 64), reason: problem });
      const log = engine.need('storage').messageLog;
      if (p.transformSteps !== undefined) {
        const fields = fieldsOf(p.transformSteps);
        // Like the product's configureTopic, a topic named for the first time is created.
        await log.ensureTopic(topic);
        await log.configureTransform(topic, fields);
      }
      const current = retention.get(topic);
      const policy: RetentionPolicy = {
        maxAgeSeconds: limit(p.retentionSeconds, current?.maxAgeSeconds),
        maxMessages: limit(p.retentionMessages, current?.maxMessages),
      };
      const stored = await retention.configure(topic, policy);
      // Trim at once, so the answer's limits already hold (the timer keeps them after).
      await retention.run(engine.clock.now(), [topic]);
      const result: TopicConfigureResult = { topic, retentionSeconds: stored?.maxAgeSeconds ?? null, retentionMessages: stored?.maxMessages ?? null };
      // The transform part is answered when asked about or in force.
      const transform = log.transformStatus(topic);
      if (p.transformSteps !== undefined || (transform?.fields.length ?? 0) > 0) {
        result.transformSteps = stepsOf(transform);
        result.transformBackfill = transform?.backfill ?? IDLE;
      }
      return result;
    },
  });
}

/** `log.status`: the message log's size against `log_max_bytes` and what sessions still owe (an operator's view: a grant like any command). */
export function registerLogStatus(engine: Engine, retention: TopicRetention): void {
  engine.bus.register<Record<string, never>, LogSizeStatus>({
    name: 'log.status',
    summary: "The message log's size against log_max_bytes: messages trimmed for it, and those kept because a session still owes them.",
    params: { type: 'object', additionalProperties: false, properties: {} },
    handler: () => retention.logStatus(),
  });
}
