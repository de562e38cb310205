/** MQTT clients of the cluster tests: the admin account, no automatic reconnect, a generous connect timeout. */
import mqtt, { type MqttClient } from 'mqtt';
import assert from 'node:assert/strict';
import type { EngineNode, TestCluster } from './nats-cluster';
import { call } from './server';

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

/** An actions answer (POST /api). */
export type ActionAnswer = { errorCode: number; errorMessage: string; result: Record<string, unknown> };

/**
 * An admin session on every node of the suite's cluster (opened before its cases), and a sender
 * of one action of `api` to node `i` with that node's token (HTTP 200 asserted; the answer's
 * errorCode is the case's to check).
 */
export function adminActionsForSuite(cluster: () => TestCluster, api: 'admin' | 'mq' | 'db'): (i: number, name: string, params: object) => Promise<ActionAnswer> {
  let tokens: string[] = [];
  before(async function () {
    tokens = await Promise.all(cluster().nodes.map(async (node) => {
      const r = await call('POST', `${node.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      return r.json.result.authToken as string;
    }));
  });
  return async (i, name, params) => {
    const r = await call('POST', `${cluster().nodes[i].http}/api`, { auth: null, body: { api, action: name, authToken: tokens[i], params } });
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
}
