/** MQTT clients of the cluster tests: the admin account, no automatic reconnect, a generous connect timeout. */
import mqtt, { type MqttClient } from 'mqtt';
import type { EngineNode } from './nats-cluster';

export function connect(url: string, options: mqtt.IClientOptions = {}): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 20_000, username: 'admin', password: 'ADMIN', ...options });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

/** Ends the client cleanly (a DISCONNECT), resolving once it has. */
export function end(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.end(false, {}, () => resolve()));
}

/** Resolves when the client has received a message on `topic`. */
export function received(client: MqttClient, topic: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (t: string): void => {
      if (t !== topic) return;
      client.off('message', listener);
      resolve();
    };
    client.on('message', listener);
  });
}

/**
 * Resolves once `to` has applied everything `from` wrote before now: a QoS 1 message published
 * through `from` reaches a subscriber on `to` after every record `from` sent before it.
 */
export async function barrier(from: EngineNode, to: EngineNode, name: string): Promise<void> {
  const subscriber = await connect(to.mqtt, { clientId: `${name}-sub` });
  await subscriber.subscribeAsync(`barrier/${name}`, { qos: 1 });
  const seen = received(subscriber, `barrier/${name}`);
  const publisher = await connect(from.mqtt, { clientId: `${name}-pub` });
  await publisher.publishAsync(`barrier/${name}`, name, { qos: 1 });
  await seen;
  subscriber.end(true);
  publisher.end(true);
}
