/** Helpers for the mq action suites: a server with actions and the MQTT broker, mq envelopes. */
import { startServer, type TestServer } from '../../helpers/server';
import { MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { ok } from '../action-client';

export const MQ_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'actions', 'mqtt'];

export function startMqServer(): Promise<TestServer> {
  return startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS });
}

/** An mq-api envelope. */
export function mq(action: string, authToken: string | undefined, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'mq', action, params, authToken, ...extra };
}

/** Every message of the topic, oldest first, with metadata and MQTT properties. */
export async function topicMessages(server: TestServer, token: string, topic: string, extra: Record<string, unknown> = {}): Promise<any[]> {
  const result = await ok(server, mq('getMessagesFromMqTopic', token, {
    topic, startFrom: 'head', maxMessages: 100_000, includeMessageMetadata: true, includeMqttProperties: true, ...extra,
  }));
  return result.messages;
}

/** The log's message count of a topic (0 when it has no catalog entry). */
export function storedCount(server: TestServer, topic: string): number {
  return server.engine.need('storage').messageLog.countTopic(topic);
}
