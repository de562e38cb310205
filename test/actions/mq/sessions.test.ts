/**
 * subscribeToMq and the MQ API session actions over real HTTP, with real MQTT clients: an MQ API
 * session reads from its position in the log; subscribeToMq changes a connected MQTT 3.1.1
 * client's subscriptions (MQTT 5 options included) without disconnecting it; one registry of
 * client names (14221), unknown names 14237.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { call, type TestServer } from '../../helpers/server';
import { brokerUrl } from '../../mqtt/mqtt-helpers';
import { unique } from '../../mqtt/pubsub-helpers';
import { fails, login, ok } from '../action-client';
import { mq, startMqServer } from './mq-client';

describe('mq actions: subscribeToMq and MQ API sessions', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startMqServer();
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  it('an MQ API session gets what its subscriptions match, from its position, page by page, each message once', async function () {
    const clientName = unique('api-session');
    const topic = unique('sessions/a');
    await ok(server, mq('createMqApiSession', token, { clientName }));
    await fails(server, mq('createMqApiSession', token, { clientName }), 14221);
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 'before the subscription', mqttPayloadType: 'utf8' }] }));
    const subscribed = await ok(server, mq('subscribeToMq', token, {
      clientName,
      subscriptionActions: [{ subscriptionAction: 'add', topicFilter: `${topic}/#` }, { subscriptionAction: 'add', topicFilter: topic }],
    }));
    assert.deepEqual(subscribed.subscriptions.map((s: any) => [s.topicFilter, s.errorCode]), [[`${topic}/#`, 0], [topic, 0]]);
    assert.deepEqual(subscribed.subscriptions[1].matchingTopics, [topic]);
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: { n: 1 } }, { payload: { n: 2 } }, { payload: { n: 3 } }] }));
    const first = await ok(server, mq('getMessagesFromMqApiSession', token, { clientName, maxMessages: 2, includeMessageMetadata: true }));
    assert.deepEqual(first.messages.map((m: any) => m.payload), [{ n: 1 }, { n: 2 }]);
    const rest = await ok(server, mq('getMessagesFromMqApiSession', token, { clientName, maxMessages: 10 }));
    assert.deepEqual(rest.messages.map((m: any) => m.payload), [{ n: 3 }]);
    assert.deepEqual((await ok(server, mq('getMessagesFromMqApiSession', token, { clientName }))).messages, []);

    const listed = await ok(server, mq('listMqSessions', token));
    assert.ok(listed.sessions.some((s: any) => s.clientName === clientName && s.kind === 'mqApi'));
    const described = await ok(server, mq('describeMqSessions', token, { clientNames: [clientName] }));
    assert.deepEqual(described.sessions[0].subscriptions.map((s: any) => s.topicFilter).sort(), [topic, `${topic}/#`].sort());
    assert.equal(described.sessions[0].messagesReceived, 3);
    assert.deepEqual(described.sessions[0].subscribedTopics, [topic]);

    await ok(server, mq('deleteMqSession', token, { clientName }));
    await fails(server, mq('getMessagesFromMqApiSession', token, { clientName }), 14237);
    await fails(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [] }), 14237);
  });

  it('subscribeToMq adds a subscription (with an identifier and No Local) to a connected MQTT 3.1.1 client, which stays connected', async function () {
    const clientId = unique('live-311');
    const topic = unique('sessions/live');
    const client = await mqtt.connectAsync(brokerUrl(server), { protocolVersion: 4, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    try {
      await fails(server, mq('createMqApiSession', token, { clientName: clientId }), 14221);
      const got: string[] = [];
      client.on('message', (t, payload) => got.push(`${t} ${payload.toString()}`));
      const result = await ok(server, mq('subscribeToMq', token, {
        clientName: clientId,
        subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic, subscriptionIdentifier: 42, receiveMyMessages: false }],
      }));
      assert.equal(result.subscriptions[0].errorCode, 0);
      await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 'from the api', mqttPayloadType: 'utf8' }] }));
      await client.publishAsync(topic, 'my own', { qos: 1 });
      await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 'marker', mqttPayloadType: 'utf8' }] }));
      while (got.length < 2) await new Promise((resolve) => client.once('message', resolve));
      assert.deepEqual(got, [`${topic} from the api`, `${topic} marker`], 'its own message is not sent back (receiveMyMessages false)');
      assert.ok(client.connected);

      await ok(server, mq('subscribeToMq', token, { clientName: clientId, subscriptionActions: [{ subscriptionAction: 'remove', topicFilter: topic }] }));
      const described = await ok(server, mq('describeMqSessions', token, { clientNames: [clientId] }));
      assert.equal(described.sessions[0].connected, true);
      assert.deepEqual(described.sessions[0].subscriptions, []);
    } finally {
      await client.endAsync();
    }
  });

  it('alterMqSession moves an MQ API session: head, a message id, a date-time, tail; describeMqSessions lists its published topics', async function () {
    const clientName = unique('api-move');
    const topic = unique('sessions/move');
    await ok(server, mq('createMqApiSession', token, { clientName }));
    await ok(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic }] }));
    const { messageIds } = await ok(server, mq('publishMessagesToMq', token, { topic, clientName, messages: [{ payload: 1 }, { payload: 2 }, { payload: 3 }] }));
    const read = async () => (await ok(server, mq('getMessagesFromMqApiSession', token, { clientName, maxMessages: 100 }))).messages.map((m: any) => m.payload);
    assert.deepEqual(await read(), [1, 2, 3]);
    await ok(server, mq('alterMqSession', token, { clientName, startFrom: messageIds[1] }));
    assert.deepEqual(await read(), [2, 3], 'from a message id: that message next');
    await ok(server, mq('alterMqSession', token, { clientName, startFrom: 'head' }));
    assert.deepEqual(await read(), [1, 2, 3], 'from the head again');
    const stamps = (await ok(server, mq('getMessagesFromMqTopic', token, { topic, startFrom: 'head', includeMessageMetadata: true }))).messages.map((m: any) => m.timestamp);
    await ok(server, mq('alterMqSession', token, { clientName, startFrom: `${stamps[0]}Z` }));
    assert.deepEqual(await read(), [1, 2, 3], 'from a date-time: the first message created at or after it');
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 4 }] }));
    await ok(server, mq('alterMqSession', token, { clientName, startFrom: 'tail' }));
    assert.deepEqual(await read(), []);
    await fails(server, mq('alterMqSession', token, { clientName }), 12025);
    const described = await ok(server, mq('describeMqSessions', token, { clientNames: [clientName] }));
    assert.deepEqual(described.sessions[0].publishedTopics, [topic]);
    assert.equal(described.sessions[0].messagesPublished, 3);
    // Times as ISO 8601 (UTC).
    assert.match(described.sessions[0].lastPublishedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(described.sessions[0].lastReceivedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('an MQTT publish (3.1.1 and 5) reaches an MQ API session: getMessagesFromMqApiSession returns it with its properties', async function () {
    const clientName = unique('api-from-mqtt');
    const topic = unique('sessions/from-mqtt');
    await ok(server, mq('createMqApiSession', token, { clientName }));
    await ok(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: `${topic}/+` }] }));
    for (const protocolVersion of [4, 5] as const) {
      const client = await mqtt.connectAsync(brokerUrl(server), { protocolVersion, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
      await client.publishAsync(`${topic}/v${protocolVersion}`, JSON.stringify({ level: protocolVersion }), {
        qos: 1, ...(protocolVersion === 5 ? { properties: { contentType: 'application/json', userProperties: { a: '1' } } } : {}),
      });
      await client.endAsync();
    }
    const { messages } = await ok(server, mq('getMessagesFromMqApiSession', token, { clientName, includeMqttProperties: true, includeOtherFields: true }));
    assert.deepEqual(messages.map((m: any) => [m.topic, m.payload, m.qos, m.contentType]), [
      [`${topic}/v4`, { level: 4 }, 1, ''],
      [`${topic}/v5`, { level: 5 }, 1, 'application/json'],
    ]);
    assert.deepEqual(messages[1].userProperties, [{ key: 'a', value: '1' }]);
  });

  it('the mq actions answer over HTTPS as over HTTP (publish, subscribe a session, read it, read the topic)', async function () {
    const https = async (action: string, params: Record<string, unknown>) => {
      const response = await call('POST', `${server.https}/api`, { body: mq(action, token, params), auth: null });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.json.errorCode, 0, response.json.errorMessage);
      return response.json.result;
    };
    const clientName = unique('tls-session');
    const topic = unique('sessions/tls');
    await https('createMqApiSession', { clientName });
    await https('subscribeToMq', { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic }] });
    const { messageIds } = await https('publishMessagesToMq', { topic, messages: [{ payload: { over: 'tls' } }] });
    assert.equal(messageIds.length, 1);
    assert.deepEqual((await https('getMessagesFromMqApiSession', { clientName })).messages.map((m: any) => m.payload), [{ over: 'tls' }]);
    assert.deepEqual((await https('getMessagesFromMqTopic', { topic, startFrom: 'head' })).messages.map((m: any) => m.payload), [{ over: 'tls' }]);
    // Every other mq action over HTTPS too.
    assert.ok((await https('listTopics', {})).topics.some((t: any) => t.topic === topic));
    assert.equal((await https('describeTopics', { topics: [topic] })).topics[0].messageCount, 1);
    assert.deepEqual(await https('configureTopic', { topic, retentionMessages: 10 }), { topic, retentionSeconds: null, retentionMessages: 10 });
    assert.ok((await https('listMqSessions', {})).sessions.some((s: any) => s.clientName === clientName));
    assert.equal((await https('describeMqSessions', { clientNames: [clientName] })).sessions[0].messagesReceived, 1);
    assert.equal((await https('alterMqSession', { clientName, startFrom: 'head' })).position, 0);
    await https('deleteMqSession', { clientName });
    await https('deleteTopic', { topic });
  });

  it('bad input: missing clientName, a bad subscription object, an invalid filter reported per subscription', async function () {
    await fails(server, mq('createMqApiSession', token, {}), 12025);
    const clientName = unique('api-bad');
    await ok(server, mq('createMqApiSession', token, { clientName }));
    await fails(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'replace', topicFilter: 'a' }] }), 12012);
    await fails(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'a', subscriptionIdentifier: 0 }] }), 12012);
    await fails(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'x'.repeat(65_501) }] }), 12012);
    await fails(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'a', userProperties: [{ key: 'k'.repeat(129), value: 'v' }] }] }), 12012);
    await fails(server, mq('createMqApiSession', token, { clientName: 'c'.repeat(65_551) }), 12012);
    const result = await ok(server, mq('subscribeToMq', token, { clientName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: 'a/#/b' }, { subscriptionAction: 'add', topicFilter: 'ok/+' }] }));
    assert.equal(result.subscriptions[0].errorCode, 14243);
    assert.match(result.subscriptions[0].errorMessage, /last level/);
    assert.equal(result.subscriptions[1].errorCode, 0);
  });
});
