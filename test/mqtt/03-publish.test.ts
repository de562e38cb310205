/**
 * MQTT 03: PUBLISH at QoS 0, 1 and 2 both ways with the exact bytes, the acknowledgement flows and
 * their packet ids, the downgrade to the subscription's QoS, wildcards in a topic name, and a
 * published message read back from its topic's integration table (db actions and REST).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestServer } from '../helpers/server';
import { call, startServer } from '../helpers/server';
import { db, login, ok, send } from '../actions/action-client';
import { MQTT_PORTS } from './mqtt-helpers';
import {
  PUBSUB_WITH_TABLES_PLUGINS, WireClient, closeClients, connectClient, connectWithInbox, publish, startPubSubBroker, subscribe, unique,
} from './pubsub-helpers';

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const INVALID_UTF8 = Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xff, 0xfe, 0x00, 0xed, 0xa0, 0x80]);

describe('mqtt 03: publish', function () {
  this.timeout(30_000);
  let server: TestServer;

  before(async () => {
    server = await startPubSubBroker();
  });
  after(() => server?.close());

  describe('QoS both ways', () => {
    for (const version of [4, 5] as const) {
      it(`level ${version}: every publish QoS to every subscription QoS, delivered at the lower of the two with the exact bytes [MQTT-3.8.4-6]`, async () => {
        const root = unique(`matrix${version}`);
        const subscribers = await Promise.all([0, 1, 2].map(() => connectWithInbox(server, { protocolVersion: version })));
        const pub = await connectClient(server, { protocolVersion: version });
        try {
          for (const [subQos, subscriber] of subscribers.entries()) {
            assert.deepEqual(await subscribe(subscriber.client, `${root}/t`, { qos: subQos as 0 | 1 | 2 }), [subQos]);
          }
          for (const pubQos of [0, 1, 2] as const) {
            await publish(pub, `${root}/t`, Buffer.concat([Buffer.from([pubQos]), ALL_BYTES]), { qos: pubQos });
          }
          for (const [subQos, subscriber] of subscribers.entries()) {
            for (const pubQos of [0, 1, 2]) {
              const got = await subscriber.inbox.next(`${root}/t`);
              assert.deepEqual(got.payload, Buffer.concat([Buffer.from([pubQos]), ALL_BYTES]), 'same bytes, in publish order');
              assert.equal(got.packet.qos, Math.min(pubQos, subQos), `published ${pubQos}, subscribed ${subQos}`);
              assert.equal(got.packet.retain, false);
              assert.equal(got.packet.dup, false);
            }
          }
        } finally {
          await closeClients(pub, ...subscribers.map((s) => s.client));
        }
      });

      it(`level ${version}: an empty payload, invalid UTF-8 bytes and 300 KiB of random bytes arrive unchanged`, async () => {
        const root = unique(`bytes${version}`);
        const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: version });
        const pub = await connectClient(server, { protocolVersion: version });
        const big = randomBytes(300 * 1024);
        try {
          await subscribe(sub, `${root}/#`, { qos: 2 });
          await publish(pub, `${root}/empty`, Buffer.alloc(0), { qos: 1 });
          await publish(pub, `${root}/invalid-utf8`, INVALID_UTF8, { qos: 2 });
          await publish(pub, `${root}/big`, big, { qos: 0 });
          assert.deepEqual((await inbox.next(`${root}/empty`)).payload, Buffer.alloc(0));
          assert.deepEqual((await inbox.next(`${root}/invalid-utf8`)).payload, INVALID_UTF8);
          assert.ok((await inbox.next(`${root}/big`)).payload.equals(big));
        } finally {
          await closeClients(sub, pub);
        }
      });
    }
  });

  describe('acknowledgement flows (raw packets)', () => {
    for (const version of [4, 5] as const) {
      it(`level ${version}: QoS 1 in gets PUBACK with its packet id [MQTT-3.3.4-1][MQTT-4.3.2-2]`, async () => {
        const root = unique('puback');
        const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: version });
        const { wire } = await WireClient.connect(server, version);
        try {
          await subscribe(sub, `${root}/t`, { qos: 1 });
          wire.send({ cmd: 'publish', topic: `${root}/t`, qos: 1, messageId: 4321, payload: Buffer.from('one'), retain: false, dup: false });
          const puback = await wire.next('puback');
          assert.equal(puback?.messageId, 4321);
          if (version === 5) assert.equal(puback.reasonCode ?? 0, 0, 'success: there was a subscriber');
          assert.equal((await inbox.next(`${root}/t`)).payload.toString(), 'one');
        } finally {
          wire.destroy();
          await closeClients(sub);
        }
      });

      it(`level ${version}: QoS 2 in: PUBREC, a duplicate PUBLISH before PUBREL is not delivered twice, PUBREL → PUBCOMP [MQTT-4.3.3-2][MQTT-4.3.3-9..11]`, async () => {
        const root = unique('qos2in');
        const { client: sub, inbox } = await connectWithInbox(server, { protocolVersion: version });
        const { wire } = await WireClient.connect(server, version);
        try {
          await subscribe(sub, `${root}/t`, { qos: 2 });
          const packet = { cmd: 'publish', topic: `${root}/t`, qos: 2, messageId: 77, payload: Buffer.from('exactly-once'), retain: false };
          wire.send({ ...packet, dup: false });
          assert.equal((await wire.next('pubrec'))?.messageId, 77);
          wire.send({ ...packet, dup: true });
          assert.equal((await wire.next('pubrec'))?.messageId, 77, 'the duplicate is answered with PUBREC again');
          wire.send({ cmd: 'pubrel', messageId: 77 });
          const pubcomp = await wire.next('pubcomp');
          assert.equal(pubcomp?.messageId, 77);
          if (version === 5) assert.equal(pubcomp.reasonCode ?? 0, 0);
          // after PUBCOMP the id is free: the same id is a new message
          wire.send({ ...packet, dup: false, payload: Buffer.from('new-message-same-id') });
          assert.equal((await wire.next('pubrec'))?.messageId, 77);
          wire.send({ cmd: 'pubrel', messageId: 77 });
          assert.equal((await wire.next('pubcomp'))?.messageId, 77);
          wire.send({ cmd: 'publish', topic: `${root}/t`, qos: 0, payload: Buffer.from('marker'), retain: false, dup: false });
          const before = await inbox.before(`${root}/t`);
          assert.deepEqual(before.map((m) => m.payload.toString()), ['exactly-once', 'new-message-same-id']);
        } finally {
          wire.destroy();
          await closeClients(sub);
        }
      });
    }

    it('MQTT 5: PUBREL of a packet id the server does not hold gets PUBCOMP 0x92 (packet identifier not found)', async () => {
      const { wire } = await WireClient.connect(server, 5);
      try {
        wire.send({ cmd: 'pubrel', messageId: 999 });
        const pubcomp = await wire.next('pubcomp');
        assert.equal(pubcomp?.messageId, 999);
        assert.equal(pubcomp.reasonCode, 0x92);
      } finally {
        wire.destroy();
      }
    });

    for (const version of [4, 5] as const) {
      it(`level ${version}: out to a subscriber: QoS 0 without packet id; QoS 1 with distinct non-zero ids, PUBACKed; QoS 2 PUBLISH → PUBREC → PUBREL → PUBCOMP [MQTT-2.2.1-2][MQTT-2.2.1-3][MQTT-4.3.3-1]`, async () => {
        const root = unique('out');
        const { wire } = await WireClient.connect(server, version);
        const pub = await connectClient(server, { protocolVersion: version });
        try {
          const suback = await wire.subscribe(1, [{ topic: `${root}/#`, qos: 2 }]);
          assert.deepEqual(suback.granted, [2]);
          await publish(pub, `${root}/zero`, 'q0', { qos: 0 });
          const zero = await wire.next('publish');
          assert.equal(zero.qos, 0);
          assert.ok(!zero.messageId, 'QoS 0 has no packet id');
          for (let i = 0; i < 3; i++) await publish(pub, `${root}/one`, `q1-${i}`, { qos: 1 });
          const ones = [await wire.next('publish'), await wire.next('publish'), await wire.next('publish')];
          assert.deepEqual(ones.map((p) => [p.topic, p.payload.toString(), p.qos]), [0, 1, 2].map((i) => [`${root}/one`, `q1-${i}`, 1]));
          const ids = ones.map((p) => p.messageId);
          assert.ok(ids.every((id) => Number.isInteger(id) && id > 0), `ids ${ids.join(',')}`);
          assert.equal(new Set(ids).size, 3, 'unacknowledged messages in flight have distinct packet ids');
          for (const id of ids) wire.send({ cmd: 'puback', messageId: id });
          await publish(pub, `${root}/two`, 'q2', { qos: 2 });
          const two = await wire.next('publish');
          assert.equal(two.qos, 2);
          assert.equal(two.payload.toString(), 'q2');
          wire.send({ cmd: 'pubrec', messageId: two.messageId });
          const pubrel = await wire.next('pubrel');
          assert.equal(pubrel?.messageId, two.messageId);
          wire.send({ cmd: 'pubcomp', messageId: two.messageId });
          // the flow is over: nothing is sent again while connected [MQTT-4.4.0-1]
          await publish(pub, `${root}/zero`, 'marker', { qos: 0 });
          const marker = await wire.next('publish');
          assert.equal(marker.payload.toString(), 'marker');
          assert.equal(wire.packets.filter((entry) => entry.packet?.cmd === 'publish' || entry.packet?.cmd === 'pubrel').length, 0, 'no resend');
        } finally {
          wire.destroy();
          await closeClients(pub);
        }
      });
    }
  });

  describe('topic names', () => {
    // [MQTT-3.3.2-2]: the Topic Name in a PUBLISH MUST NOT contain wildcards; a protocol violation
    // closes the connection (3.1.1 [MQTT-4.8.0-1]; MQTT 5 [MQTT-4.13.1-1] with DISCONNECT 0x90 topic
    // name invalid, or the generic 0x82/0x81 4.13.1 allows).
    for (const topic of ['wild/+', 'wild/#', '+', '#', 'wild/+/x']) {
      it(`a PUBLISH to "${topic}" closes the connection, nothing is delivered or stored (levels 4 and 5) [MQTT-3.3.2-2]`, async () => {
        const { client: sub, inbox } = await connectWithInbox(server);
        try {
          await subscribe(sub, ['wild/#', '#'], { qos: 1 });
          for (const version of [4, 5] as const) {
            const { wire } = await WireClient.connect(server, version);
            wire.send({ cmd: 'publish', topic, qos: 1, messageId: 5, payload: Buffer.from('wild'), retain: false, dup: false });
            wire.send({ cmd: 'pingreq' }); // answered only if the connection survived the PUBLISH
            const answer = await wire.closedOrAnswered(['puback', 'pingresp']);
            wire.destroy();
            assert.equal(answer, undefined, `level ${version}: closed, not answered (got ${JSON.stringify(answer)})`);
            const disconnect = wire.history.find((entry) => entry.packet?.cmd === 'disconnect')?.packet;
            if (version === 5) {
              assert.ok(disconnect, 'MQTT 5: a DISCONNECT says why');
              assert.ok([0x90, 0x82, 0x81].includes(disconnect.reasonCode), `reason 0x${disconnect.reasonCode?.toString(16)}`);
            } else {
              assert.deepEqual(wire.history.map((entry) => entry.packet?.cmd), ['connack'], '3.1.1: closed with nothing more sent');
            }
          }
          await publish(sub, 'wild/marker', 'marker', { qos: 1 });
          assert.deepEqual(await inbox.before('wild/marker'), []);
        } finally {
          await closeClients(sub);
        }
      });
    }

    it('MQTT 5: an empty topic name without a topic alias is a protocol error (DISCONNECT 0x82) [MQTT-3.3.2-1]', async () => {
      const { wire } = await WireClient.connect(server, 5);
      wire.send({ cmd: 'publish', topic: '', qos: 0, payload: Buffer.from('x'), retain: false, dup: false });
      wire.send({ cmd: 'pingreq' });
      const answer = await wire.closedOrAnswered(['pingresp']);
      wire.destroy();
      assert.equal(answer, undefined, 'closed');
      const disconnect = wire.history.find((entry) => entry.packet?.cmd === 'disconnect')?.packet;
      assert.ok(disconnect && [0x82, 0x90].includes(disconnect.reasonCode), JSON.stringify(disconnect));
    });

    it('3.1.1: an empty topic name closes the connection [MQTT-4.7.3-1]', async () => {
      const { wire } = await WireClient.connect(server, 4);
      // mqtt-packet refuses to encode an empty topic at level 4: bytes by hand (QoS 0, topic length 0, payload "x")
      wire.write([0x30, 0x03, 0x00, 0x00, 0x78, 0xc0, 0x00]); // and a PINGREQ
      assert.equal(await wire.closedOrAnswered(['pingresp']), undefined, 'closed');
      wire.destroy();
      assert.deepEqual(wire.history.map((entry) => entry.packet?.cmd), ['connack']);
    });
  });
});

describe('mqtt 03: a published message is readable from its integration table', function () {
  this.timeout(30_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startServer({ plugins: PUBSUB_WITH_TABLES_PLUGINS, ...MQTT_PORTS });
    token = await login(server);
  });
  after(() => server?.close());

  async function readTable(tableName: string): Promise<any[]> {
    const result = await ok(server, db('getRecordsByTable', token, { tableName, maxRecords: 100 }, {
      responseOptions: { dataFormat: 'objects', variantFormat: 'variantObject', binaryFormat: 'hex' },
    }));
    return result.data;
  }

  it('a QoS 1 message is a row of mqtt_msg_<topic> once PUBACKed: payload as a variant, QoS, retain, MQTT 5 properties (docs/storage.md)', async () => {
    const pub = await connectClient(server, { protocolVersion: 5 });
    try {
      await publish(pub, 'a/b', JSON.stringify({ n: 1 }), {
        qos: 1,
        properties: {
          contentType: 'application/json', responseTopic: 'a/reply', correlationData: Buffer.from([1, 2, 3]),
          userProperties: { k: 'v' }, payloadFormatIndicator: true, messageExpiryInterval: 3600,
        },
      });
      await publish(pub, 'a/b', INVALID_UTF8, { qos: 2 });
      await publish(pub, 'a/b', 'plain text', { qos: 0, properties: { payloadFormatIndicator: true } });
      // a QoS 0 message may still be in its commit: a QoS 1 after it on the same connection is acknowledged after both are durable
      await publish(pub, 'a/b/sync', 'x', { qos: 1 });
      const rows = await readTable('mqtt_msg_a_b');
      assert.equal(rows.length, 3);
      const [json, binary, text] = rows;
      assert.ok(json.id < binary.id && binary.id < text.id, 'ids follow publish order');
      assert.equal(json.source_payload.type, 'json');
      assert.deepEqual(json.source_payload.value, { n: 1 });
      assert.equal(json.mqtt_qos, 1);
      assert.equal(json.mqtt_retain, false);
      assert.equal(json.mqtt_content_type, 'application/json');
      assert.equal(json.mqtt_response_topic, 'a/reply');
      assert.equal(json.mqtt_expiry_seconds, 3600);
      assert.equal(typeof json.create_ts, 'string');
      assert.equal(binary.source_payload.type, 'binary', 'bytes that are not JSON and not declared UTF-8 are binary');
      assert.equal(String(binary.source_payload.value).toUpperCase(), INVALID_UTF8.toString('hex').toUpperCase());
      assert.equal(binary.mqtt_qos, 2);
      assert.equal(text.source_payload.type, 'string', 'the payload format indicator says UTF-8');
      assert.equal(text.source_payload.value, 'plain text');
      assert.equal(text.mqtt_qos, 0);
    } finally {
      await closeClients(pub);
    }
  });

  it('table names: lower-cased, "/" and other characters turned into "_" (docs/storage.md); readable through REST; not writable', async () => {
    const pub = await connectClient(server, { protocolVersion: 4 });
    try {
      await publish(pub, 'Sensors/Temp-1 (room)', '21.5', { qos: 1 });
      const rows = await readTable('mqtt_msg_sensors_temp_1__room_');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].source_payload.type, 'json');
      assert.equal(rows[0].source_payload.value, 21.5);
      const listed = await ok(server, db('listTables', token, { partialTableName: 'mqtt_msg_sensors' }, { responseOptions: { dataFormat: 'objects' } }));
      assert.deepEqual(listed.data.map((t: any) => t.tableName), ['mqtt_msg_sensors_temp_1__room_']);
      const database = listed.data[0].databaseName;
      const rest = await call('GET', `${server.http}/engine/api/v1/record/${database}/mqtt_msg_sensors_temp_1__room_/${rows[0].id}`);
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.json.source_payload, 21.5);
      const write = await send(server, db('insertRecords', token, { tableName: 'mqtt_msg_sensors_temp_1__room_', sourceData: [{ source_payload: 1 }] }));
      assert.equal(write.errorCode, 4025, 'integration tables are read-only');
    } finally {
      await closeClients(pub);
    }
  });
});
