/**
 * Review 8: the will of a connection another CONNECT takes over (same client id, no clean
 * start, Will Delay Interval 0). MQTT 5 §3.1.4 says the existing client's will is then published
 * as §3.1.2.5 describes, and with a delay of 0 nothing delays it; docs/mqtt.md lists "takeover"
 * among the ends that publish the will. On one node the engine does so, whether the new CONNECT
 * starts clean or resumes: the old connection is closed first, and its will (no delay) goes then.
 * The cluster now does the same across nodes (test/cluster/review8-resume-takeover-will).
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { closeClient, openClient, startMessagingBroker, subscribeOk, publishOk, uniqueName, type Client } from './session-helpers';

describe('mqtt review8: the will of a connection taken over by a resuming CONNECT', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => { server = await startMessagingBroker(); });
  after(() => server?.close());

  for (const [protocolVersion, clean] of [[5, true], [5, false], [4, true], [4, false]] as const) {
    const level = protocolVersion === 5 ? 'MQTT 5 (will delay 0)' : '3.1.1';
    it(`${level}, the new CONNECT ${clean ? 'starts clean' : 'resumes the session'}: the old connection's will is published once`, async () => {
      const topic = uniqueName('takeover/will');
      const watcher: Client = await openClient(server, { clientId: uniqueName('watch'), protocolVersion: 5 });
      await subscribeOk(watcher.client, topic, { qos: 1 });
      const id = uniqueName('taken');
      const v5 = protocolVersion === 5;
      const first = await openClient(server, {
        clientId: id, protocolVersion, clean: false, ...(v5 ? { properties: { sessionExpiryInterval: 300 } } : {}),
        will: { topic, payload: Buffer.from('old connection will'), qos: 1, retain: false, ...(v5 ? { properties: { willDelayInterval: 0 } } : {}) },
        reconnectPeriod: 0,
      });
      const second = await openClient(server, { clientId: id, protocolVersion, clean, ...(v5 ? { properties: { sessionExpiryInterval: 300 } } : {}) });
      // A marker after the takeover: everything the takeover published has arrived before it.
      const marker = await openClient(server, { clientId: uniqueName('marker'), protocolVersion: 5 });
      await publishOk(marker.client, topic, 'marker', { qos: 1 });
      await watcher.inbox.waitForPayload('marker');
      assert.deepEqual(watcher.inbox.payloads(), ['old connection will', 'marker']);
      await closeClient(marker);
      await closeClient(second);
      first.client.end(true);
      await closeClient(watcher);
    });
  }
});
