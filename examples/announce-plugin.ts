/**
 * An example third-party plugin that publishes through the message core's port
 * (`engine.need('messageCore')`, provided by the messaging plugin): the command `announce.post`
 * publishes a text to `announcements/<channel>` and answers once the message is stored, when
 * every subscriber (MQTT clients, MQ API sessions) is sent it.
 * Load it with `"plugins": ["storage-lmdb", "messaging", "mqtt", "./dist/examples/announce-plugin.js"]`.
 */
import { definePlugin, EngineError, type CoreMessage, type PublishOrigin } from 'engine';

interface PostParams { channel: string; text: string }

export default definePlugin({
  name: 'announce',
  version: '1.0.0',
  dependencies: ['messaging'],
  register(engine) {
    const core = engine.need('messageCore');
    engine.bus.register<PostParams, { sequence: number }>({
      name: 'announce.post',
      summary: 'Publishes a text to announcements/<channel>',
      params: {
        type: 'object', required: ['channel', 'text'], additionalProperties: false,
        properties: { channel: { type: 'string', pattern: '^[a-z0-9-]{1,32}$' }, text: { type: 'string', maxLength: 1000 } },
      },
      resource: () => ({ kind: 'system' }),
      handler: ({ channel, text }) => new Promise((resolve, reject) => {
        const message: CoreMessage = {
          topic: `announcements/${channel}`, payload: Buffer.from(text), qos: 1, retain: false,
          properties: { contentType: 'text/plain' }, publisher: null, createdAt: engine.clock.now(), sequence: 0,
        };
        // Told once the message is durable (its sequence set); one publisher, never paused.
        const origin: PublishOrigin = {
          mayPause: () => false,
          pausePublishing: () => undefined,
          resumePublishing: () => undefined,
          stored: (_token, ok, stored) => (ok ? resolve({ sequence: stored.sequence }) : reject(new EngineError('INTERNAL', { reason: 'the message was not stored' }))),
          fail: (error) => reject(error),
        };
        core.publish(message, origin);
      }),
    });
  },
});
