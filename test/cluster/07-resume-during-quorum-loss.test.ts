/**
 * A persistent session RESUMED while the stream has lost its quorum (docs/cluster.md, "Failures"):
 * nothing new needs storing to resume it, so the CONNACK accepts it with Session Present and its
 * queued messages with it (they are delivered once its writes go through). Only a NEW persistent session is refused (0x88).
 * Regression: the resume waited for a write like a new session, was refused with 0x88 and the
 * session was ended, so its queued messages were lost.
 */
import assert from 'node:assert/strict';
import mqtt, { type MqttClient } from 'mqtt';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

/** Connects; the CONNACK's Session Present and the first message that arrives. */
function connectAnswer(url: string, options: mqtt.IClientOptions): Promise<{ client: MqttClient; sessionPresent: boolean; message: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 60_000, username: 'admin', password: 'ADMIN', ...options });
    const message = new Promise<string>((got) => client.once('message', (_topic, payload) => got(payload.toString())));
    client.once('connect', (connack) => resolve({ client, sessionPresent: connack.sessionPresent, message }));
    client.once('error', (error) => {
      client.end(true);
      reject(error);
    });
  });
}

describe('cluster: resuming a session while quorum is lost', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();

  it('a persistent session resumed with two of three nats-servers down is accepted with Session Present (CONNACK 0x88 only for a new one)', async function () {
    const node = cluster().nodes[0];
    const options = { clientId: 'resume-quorum', protocolVersion: 5 as const, clean: false, properties: { sessionExpiryInterval: 3600 } };
    const subscriber = await connect(node.mqtt, options);
    const disconnects: string[] = [];
    subscriber.on('disconnect', (packet) => disconnects.push(`${packet.reasonCode} ${packet.properties?.reasonString ?? ''}`));
    await subscriber.subscribeAsync('resume-quorum/t', { qos: 1 }).catch((error: Error) => {
      throw new Error(`${error.message}; DISCONNECT: ${disconnects.join(', ')}; log: ${node.process?.output().slice(-3000)}`);
    });
    await subscriber.endAsync();
    const publisher = await connect(node.mqtt, { clientId: 'resume-quorum-pub' });
    await publisher.publishAsync('resume-quorum/t', 'queued', { qos: 1 });
    publisher.end(true);

    const [, n2, n3] = cluster().nats.servers;
    await Promise.all([n2.stop('SIGKILL'), n3.stop('SIGKILL')]);

    // Resumed on the node that owns it: nothing new to store, so it is accepted with Session Present.
    const resumed = await connectAnswer(node.mqtt, options);
    assert.equal(resumed.sessionPresent, true, 'the resumed session is accepted during the quorum loss');
    resumed.client.end(true);
    // One after the other, as NatsCluster.start does (test/helpers/nats-cluster.ts).
    await n2.start();
    await n3.start();
  });
});
