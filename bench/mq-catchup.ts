/**
 * The MQTT side of the read measurement of `npm run bench -- mq`: a persistent session (MQTT
 * 3.1.1, clean session false) subscribed at QoS 1 while offline collects the topic's messages in
 * the log; `catchUp` reconnects it and times until every one has arrived (each PUBACKed by
 * mqtt.js). It is the MQTT way of reading stored messages, as getMessagesFromMqTopic is the
 * action way: both are served from the durable log, not from memory queued per client.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { HOST } from './load';

export interface CatchUpResult {
  messages: number;
  seconds: number;
  messagesPerSecond: number;
}

const USER = { username: 'admin', password: 'ADMIN' };

function open(port: number, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect({
      host: HOST, port, protocolVersion: 4, clientId, clean: false, reconnectPeriod: 0, connectTimeout: 10_000, ...USER,
    });
    client.once('connect', () => resolve(client));
    client.once('error', (error) => { client.end(true); reject(error); });
  });
}

function close(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.end(false, {}, () => resolve()));
}

/** Creates the persistent session `clientId` with a QoS 1 subscription to `topic`, and leaves it offline. */
export async function prepareSession(port: number, clientId: string, topic: string): Promise<void> {
  const client = await open(port, clientId);
  try {
    const granted = await client.subscribeAsync(topic, { qos: 1 });
    if (granted[0]?.qos !== 1) throw new Error(`SUBSCRIBE ${topic} was granted ${JSON.stringify(granted)}`);
  } finally {
    await close(client);
  }
}

/**
 * Reconnects the session and waits for `expected` messages (the CONNECT is inside the timed
 * span: it is what a reader pays to start). Not all of them within `timeoutMs` is an error.
 */
export async function catchUp(port: number, clientId: string, expected: number, timeoutMs: number): Promise<CatchUpResult> {
  const started = process.hrtime.bigint();
  let received = 0;
  let client: MqttClient | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`catch-up of ${clientId}: ${received} of ${expected} messages within ${timeoutMs / 1000} s`)), timeoutMs);
    const onMessage = (): void => {
      received++;
      if (received === expected) {
        clearTimeout(timer);
        resolve();
      }
    };
    open(port, clientId).then((connected) => {
      client = connected;
      connected.on('message', onMessage);
    }, (error: unknown) => { clearTimeout(timer); reject(error); });
  });
  try {
    await done;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { messages: received, seconds, messagesPerSecond: received / seconds };
  } finally {
    if (client) await close(client);
  }
}
