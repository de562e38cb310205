/**
 * The message core's sessions, protocol neutral: driven through MessageCore's API with a fake
 * SessionOutlet (core-helpers.ts). Flow control (a full window, a connection that cannot write),
 * catching up from the log beyond what memory keeps, overlapping and shared subscriptions.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server';
import type { Principal } from '../../kernel/auth/principal';
import type { MessageCore } from '../../plugins/messaging/message-core';
import type { Session } from '../../plugins/messaging/session';
import type { QoS } from '../../plugins/messaging/message';
import { FakeOutlet, coreMessage, subscription } from './core-helpers';
import { uniqueName } from '../mqtt/session-helpers';

const ADMIN: Principal = { account: 'admin', roles: ['admin'] };
const RING_MESSAGES = 1024;

describe('message core sessions (through the MessageCore API)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let core: MessageCore;
  const open: Array<[Session, FakeOutlet]> = [];

  before(async function () {
    // A ring of 1,024 messages (the default keeps 65,536): a few thousand messages outrun it.
    server = await startServer({ plugins: ['storage-lmdb', 'messaging'], mq_ring_messages: RING_MESSAGES });
    core = server.engine.need('messaging');
  });

  afterEach(function () {
    for (const [session, outlet] of open.splice(0)) core.closeSession(session, outlet, false);
  });

  after(async function () {
    await server?.close();
  });

  function connect(outlet: FakeOutlet): Session {
    const { session } = core.openSession(uniqueName('core'), ADMIN, { cleanStart: true, expiryInterval: 0, kind: 'mqApi' }, outlet);
    open.push([session, outlet]);
    return session;
  }

  /** Publishes in one commit; routing is done when it resolves. */
  function publish(topic: string, payloads: string[], qos: QoS = 0): Promise<number[]> {
    return core.publishAll(payloads.map((payload) => coreMessage(topic, payload, qos)));
  }

  function range(prefix: string, count: number, start = 0): string[] {
    return Array.from({ length: count }, (_, i) => `${prefix}${start + i}`);
  }

  /** Acknowledges every delivery as it comes until `total` arrived, checking the window is never exceeded. */
  async function acknowledgeUntil(session: Session, outlet: FakeOutlet, total: number): Promise<void> {
    for (let i = 0; i < total; i++) {
      await outlet.waitForCount(i + 1);
      // Not lagging: it reached the end of the log, so everything it will get has come.
      if (!session.lagging) assert.equal(outlet.deliveries.length, total, `caught up after ${outlet.deliveries.length} of ${total} deliveries`);
      assert.ok(session.inflightCount <= outlet.receiveMaximum, `${session.inflightCount} in flight over a window of ${outlet.receiveMaximum}`);
      const delivery = outlet.deliveries[i];
      assert.equal(delivery.qos, 1);
      assert.equal(core.acknowledge(session, delivery.packetId, 'puback'), true, `PUBACK of delivery ${i} refused`);
    }
  }

  it('a publisher feeding a lagging subscriber is paused, unless it has messages in flight itself (it must read their acknowledgements)', async function () {
    const topic = `${uniqueName('pacing')}/t`;
    const outlet = new FakeOutlet(1);
    const session = connect(outlet);
    core.subscribe(session, topic, subscription(1));
    const origin = (mayPause: boolean) => {
      const calls: string[] = [];
      let stored = 0;
      let storedAll!: () => void;
      const done = new Promise<void>((resolve) => { storedAll = resolve; });
      return {
        calls, done,
        mayPause: () => mayPause,
        pausePublishing: () => { calls.push('pause'); },
        resumePublishing: () => { calls.push('resume'); },
        stored: () => { if (++stored === 3) storedAll(); },
        fail: (error: unknown) => { throw error; },
      };
    };
    const plain = origin(true);
    const consuming = origin(false);
    for (const [source, tag] of [[plain, 'p'], [consuming, 'c']] as const) {
      for (let i = 0; i < 3; i++) core.publish(coreMessage(topic, `${tag}${i}`, 1), source, i * 4 + 1);
      await source.done;
    }
    assert.equal(session.lagging, true, 'the subscriber lags (window of 1)');
    assert.ok(plain.calls.includes('pause'), 'a plain publisher waits for it');
    assert.deepEqual(consuming.calls, [], 'one that must read its own acknowledgements is never paused');
  });

  it('a resumed session not yet served (between CONNECT and CONNACK) does not pause publishers, however young the process', async function () {
    const topic = `${uniqueName('young')}/t`;
    const clientId = uniqueName('young');
    const first = new FakeOutlet(10);
    const { session } = core.openSession(clientId, ADMIN, { cleanStart: true, expiryInterval: 3600, kind: 'mqApi' }, first);
    core.subscribe(session, topic, subscription(1));
    core.closeSession(session, first, false);
    const again = new FakeOutlet(10);
    const reopened = core.openSession(clientId, ADMIN, { cleanStart: false, expiryInterval: 0, kind: 'mqApi' }, again);
    open.push([reopened.session, again]);
    assert.equal(reopened.present, true);
    assert.equal(reopened.session.lagging, true, 'not resumed yet: it lags until the protocol answers the connect');
    const calls: string[] = [];
    let storedAll!: () => void;
    const stored = new Promise<void>((resolve) => { storedAll = resolve; });
    const publisher = {
      mayPause: () => true,
      pausePublishing: () => { calls.push('pause'); },
      resumePublishing: () => { calls.push('resume'); },
      stored: () => storedAll(),
      fail: (error: unknown) => { throw error; },
    };
    // A process a second old, as right after a restart when persistent clients reconnect: the
    // session never made progress, so it is not a slow target whatever the elapsed-time clock reads.
    const realNow = performance.now;
    performance.now = () => 1000;
    try {
      core.publish(coreMessage(topic, 'm', 1), publisher, 1);
      await stored;
    } finally {
      performance.now = realNow;
    }
    assert.deepEqual(calls, [], 'the publisher is not paused for a session that has not been served yet');
  });

  it('a full window makes the session lag; it gets the rest in order, none twice, as it acknowledges', async function () {
    const topic = `${uniqueName('window')}/t`;
    const outlet = new FakeOutlet(2);
    const session = connect(outlet);
    core.subscribe(session, topic, subscription(1));

    const ids = await publish(topic, range('m', 7), 1);
    assert.deepEqual(outlet.payloads(), ['m0', 'm1'], 'only the window is delivered');
    assert.equal(session.lagging, true);

    await acknowledgeUntil(session, outlet, 7);
    assert.deepEqual(outlet.payloads(), range('m', 7));
    assert.deepEqual(outlet.deliveries.map((d) => d.message.sequence), ids);
    assert.equal(new Set(outlet.deliveries.map((d) => d.message.sequence)).size, 7);

    // Caught up: live again, the next message comes at once (while the window has room).
    assert.equal(session.lagging, false);
    await publish(topic, ['live'], 1);
    assert.deepEqual(outlet.payloads().slice(7), ['live']);
  });

  it('a lagging session served from memory gets what its subscriptions match now, not when the messages were routed', async function () {
    const root = uniqueName('resubscribed');
    const outlet = new FakeOutlet(1);
    const session = connect(outlet);
    core.subscribe(session, `${root}/a`, subscription(1));
    core.subscribe(session, `${root}/b`, subscription(1));
    await core.publishAll(range('m', 6).map((payload, i) => coreMessage(`${root}/${i % 2 ? 'b' : 'a'}`, payload, 1)));
    assert.deepEqual(outlet.payloads(), ['m0'], 'the window is full: the rest waits in the ring');
    assert.equal(session.lagging, true);
    // Routed while both subscriptions held; one is gone before the catch-up serves them.
    assert.equal(core.unsubscribe(session, `${root}/b`), true);
    assert.equal(core.acknowledge(session, outlet.deliveries[0].packetId, 'puback'), true);
    await outlet.waitForCount(2);
    assert.equal(core.acknowledge(session, outlet.deliveries[1].packetId, 'puback'), true);
    await outlet.waitForCount(3);
    assert.equal(core.acknowledge(session, outlet.deliveries[2].packetId, 'puback'), true);
    await publish(`${root}/a`, ['marker'], 1);
    await outlet.waitForCount(4);
    assert.deepEqual(outlet.payloads(), ['m0', 'm2', 'm4', 'marker']);
  });

  it('a lagging session that subscribes again to the same filter still gets the messages it was behind on [MQTT-3.8.4-3]', async function () {
    const topic = `${uniqueName('replaced')}/t`;
    const outlet = new FakeOutlet(1);
    const session = connect(outlet);
    core.subscribe(session, topic, subscription(1));
    await publish(topic, range('r', 4), 1);
    assert.deepEqual(outlet.payloads(), ['r0']);
    assert.equal(session.lagging, true);
    // The same filter again (a new QoS): the subscription is replaced, its flow goes on.
    assert.equal(core.subscribe(session, topic, subscription(1)), true);
    await acknowledgeUntil(session, outlet, 4);
    assert.deepEqual(outlet.payloads(), range('r', 4));
  });

  it('with a window of 1, catches up through more messages than the ring keeps: the older ones are read back from the log', async function () {
    const topic = `${uniqueName('deep')}/t`;
    const outlet = new FakeOutlet(1);
    const session = connect(outlet);
    core.subscribe(session, topic, subscription(1));
    // Nearly three times the ring (mq_ring_messages): the oldest are no longer in memory.
    const total = 3_000;
    assert.equal(core.recent.capacity, RING_MESSAGES);
    const fromLogBefore = core.messagesCaughtUpFromLog;
    const ids = [
      ...await publish(topic, range('d', 2_000), 1),
      ...await publish(topic, range('d', 1_000, 2_000), 1),
    ];
    assert.equal(outlet.deliveries.length, 1);
    assert.equal(session.lagging, true);

    await acknowledgeUntil(session, outlet, total);
    // Every message behind the ring's last RING_MESSAGES (all but the first, delivered live) came from the log.
    const fromLog = core.messagesCaughtUpFromLog - fromLogBefore;
    assert.ok(fromLog >= total - 1 - RING_MESSAGES, `only ${fromLog} messages read from the log for ${total - 1 - RING_MESSAGES} the ring could not hold`);
    const sequences = outlet.deliveries.map((d) => d.message.sequence);
    assert.equal(outlet.deliveries.length, total);
    assert.deepEqual(sequences, ids, 'every message once, in log order');
    assert.deepEqual(outlet.payloads(), range('d', total));
  });

  it('a connection that cannot write gets nothing until core.writable(session), then the rest in order', async function () {
    const topic = `${uniqueName('write')}/t`;
    const outlet = new FakeOutlet(10);
    const session = connect(outlet);
    core.subscribe(session, topic, subscription(0));

    outlet.open = false;
    await publish(topic, range('w', 5));
    assert.deepEqual(outlet.deliveries, [], 'delivered to a connection that cannot write');
    assert.equal(session.lagging, true);

    // It drains, takes two and is full again: the catch-up stops there.
    outlet.open = true;
    outlet.closeAfter = 2;
    core.writable(session);
    await outlet.waitForCount(2);
    await publish(topic, ['w5']); // not offered live to a lagging session
    assert.deepEqual(outlet.payloads(), ['w0', 'w1']);

    outlet.open = true;
    outlet.closeAfter = undefined;
    core.writable(session);
    await outlet.waitForCount(6);
    assert.deepEqual(outlet.payloads(), range('w', 6));
    await publish(topic, ['live']);
    assert.deepEqual(outlet.payloads(), [...range('w', 6), 'live']);
  });

  it('overlapping subscriptions give one delivery at the highest QoS with every subscription identifier', async function () {
    const root = uniqueName('overlap');
    const outlet = new FakeOutlet(1);
    const session = connect(outlet);
    core.subscribe(session, `${root}/+`, subscription(0, 7));
    core.subscribe(session, `${root}/#`, subscription(1, 9));
    core.subscribe(session, `${root}/other`, subscription(1, 11)); // does not match

    await publish(`${root}/x`, ['one'], 1);
    assert.equal(outlet.deliveries.length, 1);
    const live = outlet.deliveries[0];
    assert.equal(live.qos, 1);
    assert.deepEqual([...(live.subscriptionIds ?? [])].sort((a, b) => a - b), [7, 9]);

    // The same through a catch-up: the window (1) is full, the next two wait in the log.
    await publish(`${root}/x`, ['two', 'three'], 1);
    assert.equal(outlet.deliveries.length, 1);
    await acknowledgeUntil(session, outlet, 3);
    assert.deepEqual(outlet.payloads(), ['one', 'two', 'three']);
    for (const delivery of outlet.deliveries.slice(1)) {
      assert.equal(delivery.qos, 1);
      assert.deepEqual([...(delivery.subscriptionIds ?? [])].sort((a, b) => a - b), [7, 9]);
    }
  });

  it('members of a shared group take the messages in turn', async function () {
    const topic = `${uniqueName('shared')}/t`;
    const first = new FakeOutlet(10);
    const second = new FakeOutlet(10);
    const a = connect(first);
    const b = connect(second);
    core.subscribe(a, `$share/workers/${topic}`, subscription(0));
    core.subscribe(b, `$share/workers/${topic}`, subscription(0));

    const ids = await publish(topic, range('s', 6));
    const owner = new Map<number, string>();
    for (const d of first.deliveries) owner.set(d.message.sequence, 'a');
    for (const d of second.deliveries) owner.set(d.message.sequence, 'b');
    assert.equal(first.deliveries.length + second.deliveries.length, 6, 'each message once to the group');
    const turns = ids.map((id) => owner.get(id));
    assert.ok(turns.every((t) => t !== undefined), `a message went to no member: ${turns.join(',')}`);
    for (let i = 1; i < turns.length; i++) assert.notEqual(turns[i], turns[i - 1], `not in turn: ${turns.join(',')}`);
  });

  it('a QoS 1 message for a shared group is not lost when the member whose turn it is has a full window', async function () {
    const topic = `${uniqueName('shared-full')}/t`;
    const narrow = new FakeOutlet(1);
    const wide = new FakeOutlet(10);
    const a = connect(narrow);
    const b = connect(wide);
    core.subscribe(a, `$share/workers/${topic}`, subscription(1));
    core.subscribe(b, `$share/workers/${topic}`, subscription(1));

    // In turn: q0 to one member, q1 to the other, q2 to the first again, whose window (1) may be full.
    const ids = await publish(topic, ['q0', 'q1', 'q2'], 1);
    // Whoever got q0 acknowledges it; a message waiting for that member comes now.
    for (const [session, outlet] of [[a, narrow], [b, wide]] as const) {
      for (const d of outlet.deliveries) core.acknowledge(session, d.packetId, 'puback');
    }
    // Until the catch-ups are over (turns of the event loop, no timer): whatever is owed is sent by then.
    while (a.lagging || b.lagging) await new Promise((resolve) => setImmediate(resolve));
    const delivered = [...narrow.deliveries, ...wide.deliveries].map((d) => d.message.sequence).sort((x, y) => x - y);
    assert.deepEqual(delivered, ids, 'each message of the group delivered once to some member');
  });
});
