/**
 * MQTT 04: retained messages: sent on subscribe with RETAIN 1, replaced by the next retained
 * message, cleared by an empty payload (which is delivered but not kept), Retain Handling 0/1/2,
 * the RETAIN flag on normal delivery, none for shared subscriptions, and kept across a restart.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { TestServer } from '../helpers/server';
import { tempDataDir } from '../helpers/server';
import {
  closeClients, connectClient, connectWithInbox, publish, startPubSubBroker, subscribe, unique,
} from './pubsub-helpers';

describe('mqtt 04: retain', function () {
  this.timeout(30_000);
  let server: TestServer;

  before(async () => {
    server = await startPubSubBroker();
  });
  after(() => server?.close());

  for (const version of [4, 5] as const) {
    it(`level ${version}: a new subscriber gets the last retained message with RETAIN 1, at the lower of the two QoS [MQTT-3.3.1-5][MQTT-3.3.1-6]`, async () => {
      const root = unique(`retained${version}`);
      const pub = await connectClient(server, { protocolVersion: version });
      const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: version });
      try {
        await publish(pub, `${root}/t`, 'first', { qos: 1, retain: true });
        await publish(pub, `${root}/t`, Buffer.from([0xff, 0x00, 0xfe]), { qos: 2, retain: true }); // replaces the first
        await publish(pub, `${root}/t`, 'not-retained', { qos: 1, retain: false }); // leaves the retained one in place
        assert.deepEqual(await subscribe(sub, `${root}/t`, { qos: 1 }), [1]);
        const got = await inbox.next(`${root}/t`);
        assert.deepEqual(got.payload, Buffer.from([0xff, 0x00, 0xfe]));
        assert.equal(got.packet.retain, true, 'sent because of the new subscription: RETAIN 1');
        assert.equal(got.packet.qos, 1, 'min(message QoS 2, subscription QoS 1)');
        await publish(pub, `${root}/t`, 'marker', { qos: 1 });
        assert.deepEqual(await inbox.before(`${root}/t`), [], 'only the last retained message, once');
      } finally {
        await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
        await closeClients(pub, sub);
      }
    });
  }

  it('a wildcard subscription gets the retained message of every matching topic, and no $-topic through # [MQTT-4.7.2-1]', async () => {
    const root = unique('wildretained');
    const pub = await connectClient(server);
    const { client: sub, inbox } = await connectWithInbox(server);
    try {
      for (const leaf of ['a', 'b/c', 'd/e/f']) await publish(pub, `${root}/${leaf}`, leaf, { qos: 1, retain: true });
      await publish(pub, `$${root}/x`, 'dollar', { qos: 1, retain: true });
      await subscribe(sub, [`${root}/#`], { qos: 1 });
      const got: string[] = [];
      for (let i = 0; i < 3; i++) {
        const message = await inbox.take();
        assert.equal(message.packet.retain, true);
        got.push(message.topic);
      }
      assert.deepEqual(got.sort(), [`${root}/a`, `${root}/b/c`, `${root}/d/e/f`]);
      const { client: all, inbox: allInbox } = await connectWithInbox(server);
      await subscribe(all, ['#'], { qos: 0 });
      await publish(pub, `${root}/marker`, 'marker', { qos: 1 });
      const beforeMarker = await allInbox.before(`${root}/marker`);
      assert.ok(!beforeMarker.some((m) => m.topic.startsWith('$')), 'no $-topic retained message through #');
      for (const leaf of ['a', 'b/c', 'd/e/f']) assert.ok(beforeMarker.some((m) => m.topic === `${root}/${leaf}`), `# gets ${leaf}`);
      await closeClients(all);
    } finally {
      for (const leaf of ['a', 'b/c', 'd/e/f']) await publish(pub, `${root}/${leaf}`, '', { qos: 1, retain: true }).catch(() => undefined);
      await publish(pub, `$${root}/x`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, sub);
    }
  });

  for (const version of [4, 5] as const) {
    it(`level ${version}: an empty retained payload clears the retained message; it is delivered to current subscribers but not kept [MQTT-3.3.1-10][MQTT-3.3.1-11]`, async () => {
      const root = unique(`clear${version}`);
      const pub = await connectClient(server, { protocolVersion: version });
      const current = await connectWithInbox(server, { protocolVersion: version });
      const later = await connectWithInbox(server, { protocolVersion: version });
      try {
        await publish(pub, `${root}/t`, 'kept', { qos: 1, retain: true });
        await subscribe(current.client, `${root}/t`, { qos: 1 });
        assert.equal((await current.inbox.next(`${root}/t`)).payload.toString(), 'kept');
        await publish(pub, `${root}/t`, Buffer.alloc(0), { qos: 1, retain: true });
        const cleared = await current.inbox.next(`${root}/t`);
        assert.equal(cleared.payload.length, 0, 'processed as normal: the empty message is delivered');
        await subscribe(later.client, `${root}/t`, { qos: 1 });
        await publish(pub, `${root}/t`, 'marker', { qos: 1 });
        assert.deepEqual(await later.inbox.before(`${root}/t`), [], 'neither the old retained message nor the empty one');
      } finally {
        await closeClients(pub, current.client, later.client);
      }
    });
  }

  it('a retained QoS 0 message replaces the retained message too [MQTT-3.3.1-7 (3.1.1)]', async () => {
    const root = unique('retainq0');
    const pub = await connectClient(server, { protocolVersion: 4 });
    const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
    try {
      await publish(pub, `${root}/t`, 'q1', { qos: 1, retain: true });
      await publish(pub, `${root}/t`, 'q0', { qos: 0, retain: true });
      await publish(pub, `${root}/sync`, 'sync', { qos: 1 }); // acknowledged after the QoS 0 message before it is stored
      await subscribe(sub, `${root}/t`, { qos: 1 });
      const got = await inbox.next(`${root}/t`);
      assert.equal(got.payload.toString(), 'q0');
      assert.equal(got.packet.qos, 0);
    } finally {
      await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, sub);
    }
  });

  it('3.1.1: RETAIN is 1 when sent because of a new subscription, 0 on an established subscription whatever the publisher set [MQTT-3.3.1-8][MQTT-3.3.1-9]', async () => {
    const root = unique('retainflag');
    const pub = await connectClient(server, { protocolVersion: 4 });
    const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: 4 });
    try {
      await publish(pub, `${root}/t`, 'old', { qos: 1, retain: true });
      await subscribe(sub, `${root}/t`, { qos: 1 });
      const onSubscribe = await inbox.next(`${root}/t`);
      assert.equal(onSubscribe.packet.retain, true);
      await publish(pub, `${root}/t`, 'live-retained', { qos: 1, retain: true });
      const live = await inbox.next(`${root}/t`);
      assert.equal(live.payload.toString(), 'live-retained');
      assert.equal(live.packet.retain, false, 'matches an established subscription: RETAIN 0');
    } finally {
      await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, sub);
    }
  });

  it('MQTT 5: Retain Handling 0 sends on every SUBSCRIBE, 1 only when the subscription is new, 2 never [MQTT-3.3.1-9][MQTT-3.3.1-10][MQTT-3.3.1-11]', async () => {
    const root = unique('rh');
    const pub = await connectClient(server);
    const subs = await Promise.all([0, 1, 2].map(() => connectWithInbox(server)));
    try {
      await publish(pub, `${root}/t`, 'retained', { qos: 1, retain: true });
      for (const [rh, sub] of subs.entries()) {
        await subscribe(sub.client, `${root}/t`, { qos: 1, rh: rh as 0 | 1 | 2 });
        await subscribe(sub.client, `${root}/t`, { qos: 1, rh: rh as 0 | 1 | 2 }); // the same subscription again
      }
      await publish(pub, `${root}/t`, 'marker', { qos: 1 });
      const counts = await Promise.all(subs.map(async (sub) => (await sub.inbox.before(`${root}/t`)).filter((m) => m.payload.toString() === 'retained').length));
      assert.deepEqual(counts, [2, 1, 0], 'retained copies for Retain Handling 0, 1, 2');
    } finally {
      await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, ...subs.map((s) => s.client));
    }
  });

  it('MQTT 5: a retained message keeps its properties when sent on subscribe', async () => {
    const root = unique('retainprops');
    const pub = await connectClient(server);
    const { client: sub, inbox } = await connectWithInbox(server);
    try {
      await publish(pub, `${root}/t`, '{"v":1}', {
        qos: 1, retain: true,
        properties: { contentType: 'application/json', userProperties: { origin: 'sensor' }, responseTopic: `${root}/reply`, correlationData: Buffer.from('c1') },
      });
      await subscribe(sub, `${root}/t`, { qos: 1 });
      const got = await inbox.next(`${root}/t`);
      assert.equal(got.packet.properties?.contentType, 'application/json');
      assert.deepEqual({ ...got.packet.properties?.userProperties }, { origin: 'sensor' });
      assert.equal(got.packet.properties?.responseTopic, `${root}/reply`);
      assert.deepEqual(got.packet.properties?.correlationData, Buffer.from('c1'));
    } finally {
      await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, sub);
    }
  });

  it('MQTT 5: a shared subscription gets no retained message on subscribe (3.3.1.3: sent when a new Non-shared Subscription is made)', async () => {
    const root = unique('retainshared');
    const pub = await connectClient(server);
    const { client: sub, inbox } = await connectWithInbox(server);
    try {
      await publish(pub, `${root}/t`, 'retained', { qos: 1, retain: true });
      await subscribe(sub, `$share/g/${root}/t`, { qos: 1 });
      await publish(pub, `${root}/t`, 'marker', { qos: 1 });
      assert.deepEqual(await inbox.before(`${root}/t`), []);
    } finally {
      await publish(pub, `${root}/t`, '', { qos: 1, retain: true }).catch(() => undefined);
      await closeClients(pub, sub);
    }
  });

  it('retained messages (and a cleared one staying cleared) survive a broker restart on the same data folder', async () => {
    const dataDir = tempDataDir('retain-restart');
    let first: TestServer | undefined;
    let second: TestServer | undefined;
    try {
      first = await startPubSubBroker({ data_dir: dataDir });
      const pub = await connectClient(first);
      await publish(pub, 'keep/one', 'kept-qos1', { qos: 1, retain: true, properties: { contentType: 'text/plain' } });
      await publish(pub, 'keep/zero', Buffer.from([0, 1, 2]), { qos: 0, retain: true });
      await publish(pub, 'keep/gone', 'to-clear', { qos: 1, retain: true });
      await publish(pub, 'keep/gone', '', { qos: 1, retain: true });
      await publish(pub, 'keep/sync', 'sync', { qos: 1 }); // after the QoS 0 message: it is durable once this is acknowledged
      await closeClients(pub);
      await first.close({ keepData: true });
      first = undefined;

      second = await startPubSubBroker({ data_dir: dataDir });
      const { client: sub, inbox } = await connectWithInbox(second);
      await subscribe(sub, 'keep/+', { qos: 2 });
      const pubAgain = await connectClient(second);
      await publish(pubAgain, 'keep/marker', 'marker', { qos: 1 });
      const before = await inbox.before('keep/marker');
      const byTopic = new Map(before.map((m) => [m.topic, m]));
      assert.deepEqual([...byTopic.keys()].sort(), ['keep/one', 'keep/zero'], 'exactly the two retained messages');
      assert.equal(byTopic.get('keep/one')!.payload.toString(), 'kept-qos1');
      assert.equal(byTopic.get('keep/one')!.packet.qos, 1);
      assert.equal(byTopic.get('keep/one')!.packet.retain, true);
      assert.equal(byTopic.get('keep/one')!.packet.properties?.contentType, 'text/plain');
      assert.deepEqual(byTopic.get('keep/zero')!.payload, Buffer.from([0, 1, 2]));
      await closeClients(sub, pubAgain);
    } finally {
      await first?.close({ keepData: true });
      await second?.close({ keepData: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
