/**
 * publishMessagesToMq over real HTTP: payload types and binary formats, MQTT properties, delivery
 * of the exact bytes to real MQTT 3.1.1 and 5 subscribers, read back by getMessagesFromMqTopic.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../../helpers/server';
import { closeClients, connectClient, Inbox, subscribe, unique } from '../../mqtt/pubsub-helpers';
import { login, ok } from '../action-client';
import { mq, startMqServer, topicMessages } from './mq-client';

describe('mq actions: publishMessagesToMq', function () {
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startMqServer();
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  it('stores every payload type as its exact bytes, in order, and answers the message ids', async function () {
    const topic = unique('pub/types');
    const result = await ok(server, mq('publishMessagesToMq', token, {
      topic,
      messages: [
        { payload: '{"a": 1}' },
        { payload: { b: [1, 2] } },
        { payload: 42 },
        { payload: 'héllo', mqttPayloadType: 'utf8' },
        { payload: '00FF10', mqttPayloadType: 'binary' },
        { payload: 'AP8Q', mqttPayloadType: 'binary', binaryFormat: 'base64' },
        { payload: [0, 255, 16], mqttPayloadType: 'binary', binaryFormat: 'byteArray' },
        { payload: { type: 'string', value: 'v-text' }, mqttPayloadType: 'variantObject' },
        { payload: { type: 'binary', value: 'CAFE', valueEncoding: 'hex' }, mqttPayloadType: 'variantObject' },
        { payload: { type: 'json', value: { x: true } }, mqttPayloadType: 'variantObject' },
      ],
    }));
    assert.equal(result.messageIds.length, 10);
    for (let i = 1; i < 10; i++) assert.ok(result.messageIds[i] > result.messageIds[i - 1]);

    const messages = await topicMessages(server, token, topic);
    assert.deepEqual(messages.map((m) => m.id), result.messageIds);
    assert.deepEqual(messages.map((m) => m.payload), [
      { a: 1 }, { b: [1, 2] }, 42, 'héllo', '00FF10', '00FF10', '00FF10', 'v-text', 'CAFE', { x: true },
    ]);
    // JSON and UTF-8 payloads carry payload format indicator 1; binary ones do not.
    assert.deepEqual(messages.map((m) => m.payloadFormatIndicator), [1, 1, 1, 1, 0, 0, 0, 1, 0, 1]);
  });

  it('delivers the exact bytes, properties and retain flag to MQTT 5 and 3.1.1 subscribers', async function () {
    const topic = unique('pub/deliver');
    const v5 = await connectClient(server, { protocolVersion: 5 });
    const v4 = await connectClient(server, { protocolVersion: 4 });
    try {
      const inbox5 = new Inbox(v5);
      const inbox4 = new Inbox(v4);
      await subscribe(v5, topic, { qos: 1, rap: true } as any);
      await subscribe(v4, topic, { qos: 1 });
      await ok(server, mq('publishMessagesToMq', token, {
        topic,
        clientName: 'mq-publisher',
        messages: [
          {
            payload: '00FF80', mqttPayloadType: 'binary', qos: 1, contentType: 'application/octet-stream',
            correlationData: 'C0DE', responseTopic: `${topic}/reply`, expirySeconds: 3600,
            userProperties: [{ key: 'k1', value: 'v1' }, { key: 'k1', value: 'v2' }],
          },
          { payload: 'text ✓', mqttPayloadType: 'utf8', retain: true },
        ],
      }));
      const first5 = await inbox5.next(topic);
      assert.deepEqual(first5.payload, Buffer.from([0x00, 0xff, 0x80]));
      assert.equal(first5.packet.qos, 1);
      const props = first5.packet.properties;
      assert.equal(props.contentType, 'application/octet-stream');
      assert.deepEqual(props.correlationData, Buffer.from([0xc0, 0xde]));
      assert.equal(props.responseTopic, `${topic}/reply`);
      assert.ok(props.messageExpiryInterval > 0 && props.messageExpiryInterval <= 3600);
      assert.deepEqual({ ...props.userProperties }, { k1: ['v1', 'v2'] });
      assert.equal(props.payloadFormatIndicator, undefined);
      const second5 = await inbox5.next(topic);
      assert.deepEqual(second5.payload, Buffer.from('text ✓', 'utf8'));
      assert.equal(second5.packet.retain, true); // Retain As Published
      assert.equal(second5.packet.properties.payloadFormatIndicator, true);

      const first4 = await inbox4.next(topic);
      assert.deepEqual(first4.payload, Buffer.from([0x00, 0xff, 0x80]));
      const second4 = await inbox4.next(topic);
      assert.deepEqual(second4.payload, Buffer.from('text ✓', 'utf8'));

      // The retained message reaches a later subscriber with the retain flag [MQTT-3.3.1-8].
      const late = await connectClient(server, { protocolVersion: 4 });
      try {
        const lateInbox = new Inbox(late);
        await subscribe(late, topic);
        const retained = await lateInbox.next(topic);
        assert.equal(retained.packet.retain, true);
        assert.deepEqual(retained.payload, Buffer.from('text ✓', 'utf8'));
      } finally {
        await closeClients(late);
      }
    } finally {
      await closeClients(v5, v4);
    }

    const stored = await topicMessages(server, token, topic, { binaryFormat: 'base64' });
    assert.equal(stored.length, 2);
    assert.equal(stored[0].payload, Buffer.from([0x00, 0xff, 0x80]).toString('base64'));
    assert.equal(stored[0].correlationData, Buffer.from([0xc0, 0xde]).toString('base64'));
    assert.equal(stored[0].contentType, 'application/octet-stream');
    assert.equal(stored[0].expirySeconds, 3600);
    assert.equal(stored[0].publisher, 'mq-publisher');
    assert.deepEqual(stored[0].userProperties, [{ key: 'k1', value: 'v1' }, { key: 'k1', value: 'v2' }]);
    assert.equal(stored[1].retain, true);
  });

  it('publishes a call to several topics (per-message topic) in one call, and through tableName', async function () {
    const a = unique('pub/multi-a');
    const b = unique('pub/multi-b');
    const result = await ok(server, mq('publishMessagesToMq', token, {
      topic: a,
      messages: [{ payload: 1 }, { payload: 2, topic: b }, { payload: 3 }],
    }));
    assert.equal(result.messageIds.length, 3);
    assert.deepEqual((await topicMessages(server, token, a)).map((m) => m.payload), [1, 3]);
    assert.deepEqual((await topicMessages(server, token, b)).map((m) => m.payload), [2]);

    const table = server.engine.need('storage').messageLog.getTopic(a)!.table;
    await ok(server, mq('publishMessagesToMq', token, { tableName: table, messages: [{ payload: 4 }] }));
    assert.deepEqual((await topicMessages(server, token, a)).map((m) => m.payload), [1, 3, 4]);
  });

  it('with validateMqttPayload false stores a json-typed payload that is not JSON as its bytes', async function () {
    const topic = unique('pub/novalidate');
    await ok(server, mq('publishMessagesToMq', token, { topic, validateMqttPayload: false, messages: [{ payload: 'not json' }] }));
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), ['not json']);
  });

  it('an explicit payloadFormatIndicator wins over the payload type rule', async function () {
    const topic = unique('pub/pfi');
    await ok(server, mq('publishMessagesToMq', token, {
      topic, messages: [{ payload: '{}', payloadFormatIndicator: false }, { payload: '4142', mqttPayloadType: 'binary', payloadFormatIndicator: true }],
    }));
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payloadFormatIndicator), [0, 1]);
  });
});
