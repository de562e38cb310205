/**
 * Review 8: a connection on node1 whose kept session a CONNECT on node2 takes over and resumes
 * (same client id, no clean start), its will without a delay. One node publishes that will at
 * the takeover, whether the new CONNECT starts clean or resumes (test/mqtt/review8-takeover-will;
 * MQTT 5 §3.1.4: the existing client's will is published as §3.1.2.5 says, and a delay of 0
 * delays nothing). The cluster lost it: cluster-sessions.ts cancelled every held will of a kept
 * session a resume took over, whatever its delay (resumed(), sendHeld()), and a word applied
 * before the resuming CONNECT attached set the will on the session, where the attach cancelled
 * it. The resume cases failed (never published) without the fix; the clean start is the control.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { barrier, connect, received } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';

describe('cluster review8: the will of a kept session taken over on another node', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 300_000));
  const cluster = clusterForSuite();

  async function takeoverWills(clientId: string, protocolVersion: 4 | 5, clean: boolean): Promise<string[]> {
    const [node1, node2, node3] = cluster().nodes;
    const topic = `r8/${clientId}`;
    const watcher = await connect(node3.mqtt, { clientId: `watch-${clientId}` });
    await watcher.subscribeAsync(topic, { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (t, payload) => { if (t === topic) wills.push(payload.toString()); });
    const v5 = protocolVersion === 5;
    const first = await connect(node1.mqtt, {
      clientId, protocolVersion, clean: false, ...(v5 ? { properties: { sessionExpiryInterval: 300 } } : {}),
      will: { topic, payload: Buffer.from('gone'), qos: 1, retain: false, ...(v5 ? { properties: { willDelayInterval: 0 } } : {}) },
    });
    first.on('error', () => undefined);
    await barrier(node1, node2, `${clientId}-1`);
    const willOrMarker = received(watcher, topic);
    // node1 closes the first connection as it applies node2's claim, and writes its word then.
    const firstClosed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    const second: MqttClient = await connect(node2.mqtt, { clientId, protocolVersion, clean, ...(v5 ? { properties: { sessionExpiryInterval: 300 } } : {}) });
    await firstClosed;
    // node2 has applied node1's word (and so sent the will, if it does, in a turn before the
    // barrier's message) before the second barrier; the marker goes through node2 after that.
    await barrier(node1, node2, `${clientId}-2`);
    await barrier(node2, node3, `${clientId}-3`);
    const marker = await connect(node2.mqtt, { clientId: `marker-${clientId}` });
    const markerSeen = new Promise<void>((resolve) => watcher.on('message', (t, payload) => { if (t === topic && payload.toString() === 'marker') resolve(); }));
    await marker.publishAsync(topic, 'marker', { qos: 1 });
    await Promise.all([markerSeen, willOrMarker]);
    marker.end(true);
    second.end(true);
    first.end(true);
    watcher.end(true);
    return wills.filter((w) => w !== 'marker');
  }

  it('control: a clean start on node2 taking over node1\'s kept session publishes the old connection\'s will once', async function () {
    assert.deepEqual(await takeoverWills('r8-clean', 4, true), ['gone']);
  });

  it('3.1.1: a CONNECT on node2 resuming node1\'s kept session publishes the old connection\'s will once, as one node does', async function () {
    assert.deepEqual(await takeoverWills('r8-resume-4', 4, false), ['gone']);
  });

  it('MQTT 5, will delay 0: a CONNECT on node2 resuming node1\'s kept session publishes the old connection\'s will once, as one node does', async function () {
    assert.deepEqual(await takeoverWills('r8-resume-5', 5, false), ['gone']);
  });
});
