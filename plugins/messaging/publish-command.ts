/**
 * `mq.publish` on the bus: publishes messages through the message core, all or nothing, in one
 * commit, in order; resolves with their message ids once durable. Every topic is authorized
 * (`mq.publish` on `topic:<name>`) before anything is stored. The mq actions (publishMessagesToMq)
 * and plugins use it; MQTT enters the same core (`MessageCore.publish`) per packet, with the
 * same kernel decision cached per connection (docs/decisions.md "MQTT").
 */
import { isUtf8 } from 'node:buffer';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { CoreMessage, MessageProperties } from './message';
import { PUBLISH_COMMAND, type MessageCore } from './message-core';
import type { PublishParamsMessage, PublishResult } from '../../kernel/messaging/commands';

export type { PublishParamsMessage, PublishResult } from '../../kernel/messaging/commands';
import { topicNameProblem } from '../../kernel/topic-name';

export interface PublishParams {
  messages: PublishParamsMessage[];
  /** The client name the messages are published as (MQTT publisher; No Local compares it). */
  clientName?: string;
}

const STRING = { type: 'string' } as const;

export const publishParamsSchema = {
  type: 'object',
  required: ['messages'],
  additionalProperties: false,
  properties: {
    clientName: { type: 'string', minLength: 1, maxLength: 65535 },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 10_000,
      items: {
        type: 'object',
        required: ['topic', 'payload'],
        additionalProperties: false,
        properties: {
          topic: { type: 'string', minLength: 1 },
          payload: STRING,
          payloadEncoding: { enum: ['utf8', 'base64'] },
          qos: { enum: [0, 1, 2] },
          retain: { type: 'boolean' },
          contentType: STRING,
          responseTopic: STRING,
          correlationData: STRING,
          messageExpiryInterval: { type: 'integer', minimum: 0, maximum: 4294967295 },
          payloadFormatIndicator: { type: 'boolean' },
          userProperties: {
            type: 'array',
            items: { type: 'object', required: ['key', 'value'], additionalProperties: false, properties: { key: STRING, value: STRING } },
          },
        },
      },
    },
  },
} as const;

export function registerPublishCommand(engine: Engine, core: MessageCore): void {
  engine.bus.register<PublishParams, PublishResult>({
    name: PUBLISH_COMMAND,
    summary: 'Publish messages (stored in one commit, then delivered to subscribers); each topic needs mq.publish.',
    params: publishParamsSchema as unknown as { type: 'object' },
    // Every topic is authorized in the handler, before anything is stored.
    access: 'authenticated',
    handler: async (params, ctx) => {
      // Published as a client name: the caller must be allowed to use it as an MQTT CONNECT is
      // (another account's session also needs mq.takeover: its statistics and No Local follow).
      if (params.clientName !== undefined) core.authorizeSession(ctx, params.clientName);
      const now = engine.clock.now();
      // Decided once per topic of the call (each decision checks the topic's table name too).
      const authorized = new Set<string>();
      const messages: CoreMessage[] = params.messages.map((m, i) => {
        // `$SYS/...` is the broker's own (never stored: docs/mqtt.md, `$SYS`).
        const problem = m.topic.startsWith('$SYS/') || m.topic === '$SYS' ? 'the $SYS topics are the broker\'s own' : topicNameProblem(m.topic);
        if (problem) throw new EngineError('INVALID_TOPIC', { topic: m.topic, reason: problem, param: `messages[${i}].topic` });
        if (!authorized.has(m.topic)) {
          engine.authorize(ctx, PUBLISH_COMMAND, { kind: 'topic', topic: m.topic });
          authorized.add(m.topic);
        }
        const payload = Buffer.from(m.payload, m.payloadEncoding === 'base64' ? 'base64' : 'utf8');
        // A payload said to be UTF-8 must be (as an MQTT PUBLISH must, 0x99) [MQTT-3.3.2-4].
        if (m.payloadFormatIndicator === true && !isUtf8(payload)) {
          throw new EngineError('INVALID_PARAMETER', { param: `messages[${i}].payload`, reason: 'payloadFormatIndicator says UTF-8 and the payload is not' });
        }
        return {
          topic: m.topic,
          payload,
          qos: m.qos ?? 0,
          retain: m.retain === true,
          properties: properties(m),
          publisher: params.clientName ?? ctx.clientId ?? null,
          createdAt: now,
          sequence: 0,
          wire: undefined,
          wireForm: 0,
        };
      });
      const ids = await core.publishAll(messages);
      const publisher = params.clientName === undefined ? undefined : core.sessions.get(params.clientName);
      if (publisher) for (const m of messages) publisher.notePublished(m.topic, now);
      return { ids };
    },
  });
}

function properties(m: PublishParamsMessage): MessageProperties | undefined {
  const p: MessageProperties = {};
  let any = false;
  if (m.contentType !== undefined) { p.contentType = m.contentType; any = true; }
  if (m.responseTopic !== undefined) { p.responseTopic = m.responseTopic; any = true; }
  if (m.correlationData !== undefined) { p.correlationData = Buffer.from(m.correlationData, 'base64'); any = true; }
  if (m.messageExpiryInterval !== undefined) { p.messageExpiryInterval = m.messageExpiryInterval; any = true; }
  if (m.payloadFormatIndicator !== undefined) { p.payloadFormatIndicator = m.payloadFormatIndicator; any = true; }
  if (m.userProperties !== undefined && m.userProperties.length > 0) { p.userProperties = m.userProperties; any = true; }
  return any ? p : undefined;
}
