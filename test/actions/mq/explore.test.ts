/**
 * The explore actions over real HTTP with real MQTT clients: browseTopics (one tree level with
 * counts), getMqOverview, newest-first history pages (endBefore, skip), retained list and delete
 * by filter, disconnectMqClient (MQTT 5 DISCONNECT 0x98), deleteMqSessions; MQTT over WebSocket
 * at /mqtt on the HTTP port, logged in with an action session token.
 */
import assert from 'node:assert/strict';
import { once, type EventEmitter } from 'node:events';
import mqtt from 'mqtt';
import { startServer, type TestServer } from '../../helpers/server';
import { brokerUrl, MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { unique } from '../../mqtt/pubsub-helpers';
import { fails, login, ok } from '../action-client';
import { MQ_PLUGINS, mq, startMqServer } from './mq-client';

describe('mq actions: browsing and operating the broker', function () {
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

  const publish = (topic: string, payloads: unknown[], extra: Record<string, unknown> = {}) =>
    ok(server, mq('publishMessagesToMq', token, { topic, messages: payloads.map((payload) => ({ payload, ...extra })) }));

  it('browseTopics lists one level with topic and message counts aggregated under each node', async () => {
    const root = unique('tree');
    await publish(`${root}/a/x`, [1, 2, 3]);
    await publish(`${root}/a/y`, [4]);
    await publish(`${root}/a`, [5, 6]);
    await publish(`${root}/b`, [7]);
    const top = await ok(server, mq('browseTopics', token, { filter: root }));
    assert.deepEqual(top.nodes.map((n: any) => [n.name, n.topicCount, n.messageCount, n.hasChildren]), [[root, 4, 7, true]]);
    const level = await ok(server, mq('browseTopics', token, { prefix: root }));
    assert.equal(level.total, 2);
    const [a, b] = level.nodes;
    assert.deepEqual([a.name, a.path, a.isTopic, a.hasChildren, a.topicCount, a.messageCount], ['a', `${root}/a`, true, true, 3, 6]);
    assert.deepEqual([b.name, b.isTopic, b.hasChildren, b.messageCount], ['b', true, false, 1]);
    assert.match(a.lastMessageTime, /^\d{4}-\d\d-\d\dT/);
    const paged = await ok(server, mq('browseTopics', token, { prefix: root, offset: 1, limit: 1 }));
    assert.deepEqual(paged.nodes.map((n: any) => n.name), ['b']);
    // Counts follow new messages.
    await publish(`${root}/b`, [8, 9]);
    const again = await ok(server, mq('browseTopics', token, { prefix: root }));
    assert.equal(again.nodes[1].messageCount, 3);
  });

  it('getMessagesFromMqTopic pages newest first with skip and bounds with endBefore', async () => {
    const topic = unique('history');
    const { messageIds } = await publish(topic, Array.from({ length: 25 }, (_, i) => i));
    const page = async (params: Record<string, unknown>) => (await ok(server, mq('getMessagesFromMqTopic', token, { topic, includeMessageMetadata: true, ...params }))).messages.map((m: any) => m.payload);
    assert.deepEqual(await page({ maxMessages: 10 }), [15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    assert.deepEqual(await page({ maxMessages: 10, skip: 10 }), [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    assert.deepEqual(await page({ maxMessages: 10, skip: 20 }), [0, 1, 2, 3, 4]);
    assert.deepEqual(await page({ maxMessages: 3, endBefore: messageIds[10] }), [7, 8, 9]);
    assert.deepEqual(await page({ startFrom: 'head', maxMessages: 100, endBefore: messageIds[2] }), [0, 1]);
    assert.deepEqual(await page({ maxMessages: 3, endBefore: '2000-01-01T00:00:00Z' }), []);
    assert.deepEqual((await page({ maxMessages: 100, endBefore: '2999-01-01T00:00:00Z' })).length, 25);
    await fails(server, mq('getMessagesFromMqTopic', token, { topic, endBefore: 'tail' }), 12012);
  });

  it('lists retained messages by filter and deletes them by filter after a dry run', async () => {
    const root = unique('retained');
    for (const name of ['a', 'b', 'c']) await publish(`${root}/keep/${name}`, [name], { retain: true, mqttPayloadType: 'utf8' });
    await publish(`${root}/other`, ['other'], { retain: true, mqttPayloadType: 'utf8' });
    const listed = await ok(server, mq('listRetainedMessages', token, { topicFilter: `${root}/#`, limit: 2 }));
    assert.equal(listed.total, 4);
    assert.deepEqual(listed.messages.map((m: any) => [m.topic, m.payload, m.retain]), [[`${root}/keep/a`, 'a', true], [`${root}/keep/b`, 'b', true]]);
    const dry = await ok(server, mq('deleteRetainedMessages', token, { topicFilter: `${root}/keep/+`, dryRun: true }));
    assert.equal(dry.count, 3);
    assert.equal((await ok(server, mq('listRetainedMessages', token, { topicFilter: `${root}/#` }))).total, 4);
    const done = await ok(server, mq('deleteRetainedMessages', token, { topicFilter: `${root}/keep/+` }));
    assert.deepEqual(done.topics, [`${root}/keep/a`, `${root}/keep/b`, `${root}/keep/c`]);
    // A new subscriber gets only the retained message outside the filter.
    const client = await mqtt.connectAsync(brokerUrl(server), { username: 'admin', password: 'ADMIN', protocolVersion: 5 });
    const got: string[] = [];
    client.on('message', (topic) => got.push(topic));
    await client.subscribeAsync(`${root}/#`);
    await publish(`${root}/marker`, ['end'], { mqttPayloadType: 'utf8' });
    while (!got.includes(`${root}/marker`)) await once(client as unknown as EventEmitter, 'message');
    assert.deepEqual(got, [`${root}/other`, `${root}/marker`]);
    await client.endAsync();
    await fails(server, mq('deleteRetainedMessages', token, { topicFilter: 'a/#/b' }), 14243);
  });

  it('disconnectMqClient closes an MQTT 5 client with 0x98; deleteMqSessions counts, then ends disconnected sessions', async () => {
    const clientId = unique('kick');
    const client = await mqtt.connectAsync(brokerUrl(server), { clientId, username: 'admin', password: 'ADMIN', protocolVersion: 5, clean: false, properties: { sessionExpiryInterval: 600 }, reconnectPeriod: 0 });
    const disconnect = once(client as unknown as EventEmitter, 'disconnect');
    const closed = once(client as unknown as EventEmitter, 'close');
    await ok(server, mq('disconnectMqClient', token, { clientName: clientId }));
    const [packet] = await disconnect;
    assert.equal(packet.reasonCode, 0x98);
    await closed;
    await fails(server, mq('disconnectMqClient', token, { clientName: clientId }), 14237);
    const listed = await ok(server, mq('listMqSessions', token, { filter: clientId.toUpperCase() }));
    assert.deepEqual(listed.sessions.map((s: any) => [s.clientName, s.connected]), [[clientId, false]]);
    assert.equal(listed.total, 1);
    const dry = await ok(server, mq('deleteMqSessions', token, { dryRun: true }));
    assert.ok(dry.clientNames.includes(clientId));
    const done = await ok(server, mq('deleteMqSessions', token, {}));
    assert.equal(done.count, dry.count);
    assert.equal((await ok(server, mq('listMqSessions', token, { filter: clientId }))).total, 0);
    client.end(true);
  });

  it('getMqOverview counts clients, topics and the busiest topics', async () => {
    const topic = unique('busy');
    await ok(server, mq('getMqOverview', token)); // starts the per-topic activity recording
    const client = await mqtt.connectAsync(brokerUrl(server), { username: 'admin', password: 'ADMIN' });
    // Figures are shared for up to a second: ask until they include the new client.
    let overview0 = await ok(server, mq('getMqOverview', token));
    while (overview0.clientsConnected < 1) overview0 = await ok(server, mq('getMqOverview', token));
    assert.ok(overview0.topics >= 1);
    // Publish until a complete second has seen the topic.
    let overview = overview0;
    for (let i = 0; !overview.busiestTopics.some((t: any) => t.topic === topic); i++) {
      await client.publishAsync(topic, String(i), { qos: 1 });
      overview = await ok(server, mq('getMqOverview', token));
    }
    assert.ok(overview.storedMessages >= 1);
    assert.equal(typeof overview.messagesInPerSecond, 'number');
    await client.endAsync();
  });

  it('MQTT over WebSocket at /mqtt on the HTTP port accepts an action session token as the password', async () => {
    const url = `${server.http.replace('http:', 'ws:')}/mqtt`;
    const client = await mqtt.connectAsync(url, { username: 'admin', password: token, protocolVersion: 5, reconnectPeriod: 0 });
    const topic = unique('ws');
    await client.subscribeAsync(topic);
    const got = once(client as unknown as EventEmitter, 'message');
    await publish(topic, ['over ws'], { mqttPayloadType: 'utf8' });
    const [, payload] = await got;
    assert.equal(payload.toString(), 'over ws');
    await client.endAsync();
    // Another account's name with this token is refused.
    const refused = await mqtt.connectAsync(url, { username: 'nobody', password: token, protocolVersion: 5, reconnectPeriod: 0 }).then(() => 'connected', (error: any) => error.code);
    assert.equal(refused, 0x86);
  });
});

describe('mq actions: browsing under roles (a reader sees what it may read)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let adminToken: string;
  let viewerToken: string;

  before(async function () {
    server = await startServer({
      plugins: MQ_PLUGINS,
      ...MQTT_PORTS,
      roles: [{
        name: 'plant-viewer',
        grants: [{ commands: ['topic.list', 'mq.retrieve'], resources: ['topic:plant/#'] }],
        denies: [{ commands: ['topic.list', 'mq.retrieve'], resources: ['topic:plant/secret'] }],
      }],
    });
    await server.engine.accounts.create('viewer', 'viewer-pw', ['plant-viewer']);
    adminToken = await login(server);
    viewerToken = await login(server, 'viewer', 'viewer-pw');
    for (const topic of ['plant/line1', 'plant/secret', 'office/door']) {
      await ok(server, mq('publishMessagesToMq', adminToken, { topic, messages: [{ payload: topic, mqttPayloadType: 'utf8', retain: true }] }));
    }
  });
  after(() => server?.close());

  it('browseTopics, listRetainedMessages and deleteRetainedMessages leave out what the account may not see or change', async () => {
    const root = await ok(server, mq('browseTopics', viewerToken));
    assert.deepEqual(root.nodes.map((n: any) => [n.name, n.topicCount]), [['plant', 1]]);
    const plant = await ok(server, mq('browseTopics', viewerToken, { prefix: 'plant' }));
    assert.deepEqual(plant.nodes.map((n: any) => n.name), ['line1']);
    const retained = await ok(server, mq('listRetainedMessages', viewerToken, { topicFilter: '#' }));
    assert.deepEqual(retained.messages.map((m: any) => m.topic), ['plant/line1']);
    const deleted = await ok(server, mq('deleteRetainedMessages', viewerToken, { topicFilter: '#' }));
    assert.equal(deleted.count, 0, 'the viewer may not publish, so it clears nothing');
    assert.equal((await ok(server, mq('listRetainedMessages', adminToken, { topicFilter: '#' }))).total >= 3, true);
    assert.equal((await ok(server, mq('deleteMqSessions', viewerToken, { dryRun: true }))).count, 0);
  });
});

describe('MQTT with an action session token as the password', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async function () {
    // No credential cache: a locked-out account would show at once.
    server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS, credential_cache_seconds: 0 });
  });
  after(() => server?.close());

  it('the connection closes (0x87) when the session ends; retrying the dead token never locks the account out', async () => {
    const token = await login(server);
    const client = await mqtt.connectAsync(brokerUrl(server), { username: 'ADMIN', password: token, protocolVersion: 5, reconnectPeriod: 0 });
    const disconnect = once(client as unknown as EventEmitter, 'disconnect');
    const closed = once(client as unknown as EventEmitter, 'close');
    await ok(server, { api: 'admin', action: 'deleteSession', authToken: token, params: {} });
    const [packet] = await disconnect;
    assert.equal(packet.reasonCode, 0x87);
    await closed;
    for (let i = 0; i < 8; i++) {
      const refused = await mqtt.connectAsync(brokerUrl(server), { username: 'admin', password: token, protocolVersion: 5, reconnectPeriod: 0 }).then((c) => { c.end(true); return 0; }, (error: any) => error.code);
      assert.equal(refused, 0x86);
    }
    // The right password still works at once (no 12034 backoff).
    assert.equal(typeof (await login(server)), 'string');
  });
});
