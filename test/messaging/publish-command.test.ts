/**
 * `mq.publish` on the command bus: what real MQTT 5 subscribers receive (bytes, QoS, retain,
 * properties), the ids it returns against the log, all-or-nothing on a bad or denied topic, and
 * its params schema.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import type { TestServer } from '../helpers/server';
import type { CommandContext } from '../../kernel/bus/command';
import type { Principal } from '../../kernel/auth/principal';
import type { PublishParams, PublishResult } from '../../plugins/messaging/publish-command';
import { payloadText, startMessagingBroker, uniqueName } from '../mqtt/session-helpers';
import { Inbox, WireClient, closeClients, connectWithInbox, subscribe, userPropertiesInOrder } from '../mqtt/pubsub-helpers';

const ADMIN: Principal = { account: 'admin', roles: ['admin'] };
/** May publish on `allowed/#` only (role declared in the settings). */
const LIMITED: Principal = { account: 'pat', roles: ['allowed_publisher'] };

describe('mq.publish (bus command)', function () {
  this.timeout(60_000);
  let server: TestServer;
  const clients: MqttClient[] = [];

  before(async function () {
    server = await startMessagingBroker({
      roles: [{ name: 'allowed_publisher', grants: [{ commands: ['mq.publish'], resources: ['topic:allowed/#'] }] }],
    });
  });

  after(async function () {
    await closeClients(...clients);
    await server?.close();
  });

  function publish(params: PublishParams, principal: Principal = ADMIN): Promise<PublishResult> {
    const ctx: CommandContext = { principal, origin: 'test' };
    return server.engine.bus.execute<PublishResult>('mq.publish', params, ctx);
  }

  function log() {
    return server.engine.need('storage').messageLog;
  }

  async function subscriber(filter: string, options: Record<string, unknown> = {}): Promise<Inbox> {
    const { client, inbox } = await connectWithInbox(server);
    clients.push(client);
    await subscribe(client, filter, { qos: 2, ...options });
    return inbox;
  }

  /** Rejects with an EngineError whose id is `id`. */
  async function rejectsWith(promise: Promise<unknown>, id: string): Promise<any> {
    let caught: any;
    await promise.then(() => { throw new Error(`expected ${id}, it resolved`); }, (error: unknown) => { caught = error; });
    assert.equal(caught?.id, id, `expected ${id}, got ${String(caught?.id)}: ${String(caught?.message)}`);
    return caught;
  }

  it('delivers the exact bytes (utf8 and base64), QoS and properties to an MQTT 5 subscriber', async function () {
    const root = uniqueName('pub');
    const inbox = await subscriber(`${root}/#`);
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x7b, 0x0a, 0xc3]); // not UTF-8, has a NUL
    const correlation = Buffer.from([0xde, 0xad, 0x00, 0xbe, 0xef]);
    const { ids } = await publish({
      messages: [
        {
          topic: `${root}/text`, payload: 'héllo ✓ wörld', qos: 1, contentType: 'text/plain; charset=utf-8',
          correlationData: correlation.toString('base64'), responseTopic: `${root}/reply`,
          userProperties: [{ key: 'b', value: '1' }, { key: 'a', value: '2' }, { key: 'b', value: '3' }],
        },
        { topic: `${root}/bin`, payload: binary.toString('base64'), payloadEncoding: 'base64', qos: 2 },
        { topic: `${root}/json`, payload: '{ "n" : 1.50 }' }, // JSON, spaced: kept as published
      ],
    });
    assert.equal(ids.length, 3);

    const text = await inbox.next(`${root}/text`);
    assert.equal(text.payload.toString('utf8'), 'héllo ✓ wörld');
    assert.equal(text.packet.qos, 1);
    assert.equal(text.packet.retain, false);
    assert.equal(text.packet.properties?.contentType, 'text/plain; charset=utf-8');
    assert.deepEqual(Buffer.from(text.packet.properties?.correlationData ?? []), correlation);
    assert.equal(text.packet.properties?.responseTopic, `${root}/reply`);
    assert.deepEqual({ ...text.packet.properties?.userProperties }, { b: ['1', '3'], a: '2' });

    const bin = await inbox.next(`${root}/bin`);
    assert.deepEqual(bin.payload, binary);
    assert.equal(bin.packet.qos, 2);
    assert.equal(bin.packet.properties?.contentType, undefined);
    assert.equal(bin.packet.properties?.userProperties, undefined);

    const json = await inbox.next(`${root}/json`);
    assert.equal(json.payload.toString('utf8'), '{ "n" : 1.50 }');
    assert.equal(json.packet.qos, 0);
  });

  it('forwards user properties in their published order, repeated names included (wire bytes)', async function () {
    const topic = `${uniqueName('order')}/t`;
    const { wire } = await WireClient.connect(server);
    try {
      await wire.subscribe(1, [{ topic, qos: 0 }]);
      const published = [['z', 'last-name-first'], ['a', 'x'], ['z', 'again'], ['m', ''], ['a', 'y']];
      await publish({ messages: [{ topic, payload: 'p', userProperties: published.map(([key, value]) => ({ key, value })) }] });
      const received = await wire.nextWire('publish');
      assert.ok(received, 'no PUBLISH arrived');
      assert.deepEqual(userPropertiesInOrder(received.bytes), published);
    } finally {
      wire.destroy();
    }
  });

  it('a retained message goes to a later subscriber, with RETAIN set', async function () {
    const topic = `${uniqueName('ret')}/state`;
    await publish({ messages: [{ topic, payload: 'first', retain: true, qos: 1 }, { topic, payload: 'kept', retain: true, qos: 1 }] });
    const inbox = await subscriber(topic, { qos: 1 });
    // Retained messages are sent right after the SUBACK: before a live marker published after it.
    await publish({ messages: [{ topic, payload: 'marker' }] });
    const retained = await inbox.before(topic);
    assert.deepEqual(retained.map((m) => m.payload.toString()), ['kept'], 'only the latest retained message');
    assert.equal(retained[0].packet.retain, true);
    assert.equal(retained[0].packet.qos, 1);
  });

  it('returns increasing ids equal to the ids of the rows in each topic\'s log', async function () {
    const root = uniqueName('ids');
    const first = await publish({
      messages: [
        { topic: `${root}/a`, payload: 'a1' }, { topic: `${root}/b`, payload: 'b1' }, { topic: `${root}/a`, payload: 'a2' },
      ],
    });
    const second = await publish({ messages: [{ topic: `${root}/b`, payload: 'b2' }] });
    const ids = [...first.ids, ...second.ids];
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `ids not increasing: ${ids.join(', ')}`);

    const rows = (topic: string) => log().readTopic(topic, { limit: 100 }).map((m) => [m.sequence, payloadText(m.payload)]);
    assert.deepEqual(rows(`${root}/a`), [[ids[0], 'a1'], [ids[2], 'a2']]);
    assert.deepEqual(rows(`${root}/b`), [[ids[1], 'b1'], [ids[3], 'b2']]);
    assert.equal(log().lastSequence(), ids[3]);

    // mq.retrieve reads the same ids.
    const retrieved: any = await server.engine.bus.execute('mq.retrieve', { topic: `${root}/a`, startFrom: 'head', includeMessageMetadata: true },
      { principal: ADMIN, origin: 'test' });
    assert.deepEqual(retrieved.messages.map((m: any) => Number(m.id)), [ids[0], ids[2]]);
  });

  it('all or nothing: a call whose 2nd message has a wildcard topic stores none of its messages', async function () {
    const root = uniqueName('aon');
    const inbox = await subscriber(`${root}/#`);
    const before = log().lastSequence();
    const error = await rejectsWith(publish({
      messages: [{ topic: `${root}/ok`, payload: 'not stored' }, { topic: 'a/+', payload: 'bad' }, { topic: `${root}/ok`, payload: 'nor this' }],
    }), 'INVALID_TOPIC');
    assert.equal(error.details.param, 'messages[1].topic');
    // A later call is stored right after whatever the failed one stored: nothing.
    const { ids } = await publish({ messages: [{ topic: `${root}/marker`, payload: 'marker' }] });
    assert.equal(ids[0], before + 1);
    assert.deepEqual(log().readTopic(`${root}/ok`, { limit: 10 }), []);
    assert.deepEqual((await inbox.before(`${root}/marker`)).map((m) => m.topic), []);
  });

  it('all or nothing: a call with a denied topic stores nothing and throws NOT_AUTHORIZED', async function () {
    const leaf = uniqueName('deny');
    const inbox = await subscriber('#');
    const before = log().lastSequence();
    await rejectsWith(publish({
      messages: [{ topic: `allowed/${leaf}`, payload: 'not stored' }, { topic: `denied/${leaf}`, payload: 'denied' }],
    }, LIMITED), 'NOT_AUTHORIZED');
    const { ids } = await publish({ messages: [{ topic: `allowed/${leaf}`, payload: 'marker' }] }, LIMITED);
    assert.equal(ids[0], before + 1);
    assert.deepEqual(log().readTopic(`allowed/${leaf}`, { limit: 10 }).map((m) => payloadText(m.payload)), ['marker']);
    assert.deepEqual(log().readTopic(`denied/${leaf}`, { limit: 10 }), []);
    const earlier = await inbox.before(`allowed/${leaf}`);
    assert.deepEqual(earlier.filter((m) => m.topic.endsWith(leaf)).map((m) => m.topic), []);
  });

  it('the params schema refuses qos 3, a missing payload, an unknown encoding and an empty list', async function () {
    const topic = `${uniqueName('schema')}/t`;
    const before = log().lastSequence();
    const qos = await rejectsWith(publish({ messages: [{ topic, payload: 'x', qos: 3 as any }] }), 'INVALID_PARAMETER');
    assert.match(String(qos.details.param), /qos/);
    // A required property missing is MISSING_PARAMETER (kernel/schema-validator.ts), not INVALID_PARAMETER.
    const missing = await rejectsWith(publish({ messages: [{ topic } as any] }), 'MISSING_PARAMETER');
    assert.match(String(missing.details.param), /payload/);
    await rejectsWith(publish({ messages: [{ topic, payload: 'x', payloadEncoding: 'hex' as any }] }), 'INVALID_PARAMETER');
    await rejectsWith(publish({ messages: [] }), 'INVALID_PARAMETER');
    await rejectsWith(publish({ messages: [{ topic, payload: 'x', extra: 1 } as any] }), 'INVALID_PARAMETER');
    const { ids } = await publish({ messages: [{ topic, payload: 'marker' }] });
    assert.equal(ids[0], before + 1);
  });

  it('a $SYS topic is refused: never stored in the log (docs/message-core.md "Rules")', async function () {
    const topic = `$SYS/${uniqueName('sys')}`;
    const before = log().lastSequence();
    // The broker's own topics: refused, nothing of the call stored.
    await rejectsWith(publish({ messages: [{ topic: `${uniqueName('before-sys')}/t`, payload: 'not stored' }, { topic, payload: 'not stored' }] }), 'INVALID_TOPIC');
    const { ids } = await publish({ messages: [{ topic: `${uniqueName('after-sys')}/t`, payload: 'marker' }] });
    assert.deepEqual(log().readTopic(topic, { limit: 10 }).map((m) => payloadText(m.payload)), []);
    assert.equal(log().getTopic(topic), undefined, 'an integration table for a $SYS topic');
    assert.equal(ids[0], before + 1);
  });
});
