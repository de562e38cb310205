/** listTopics, describeTopics and deleteTopic over real HTTP, with a real MQTT subscriber. */
import assert from 'node:assert/strict';
import type { TestServer } from '../../helpers/server';
import { closeClients, connectClient, Inbox, subscribe, unique } from '../../mqtt/pubsub-helpers';
import { admin, fails, login, ok } from '../action-client';
import { mq, startMqServer, storedCount } from './mq-client';

describe('mq actions: listTopics, describeTopics, deleteTopic', function () {
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startMqServer();
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  it('lists and describes topics: count, first and last message, subscribers, integration table', async function () {
    const topic = unique('topics/described');
    const client = await connectClient(server, { clientId: unique('watcher') });
    try {
      await subscribe(client, 'topics/#');
      const { messageIds } = await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1 }, { payload: 2 }, { payload: 3 }] }));

      const listed = await ok(server, mq('listTopics', token));
      const entry = listed.topics.find((t: any) => t.topic === topic);
      assert.ok(entry, 'the published topic is listed');
      assert.equal(entry.databaseName, server.engine.settings.default_database_name);
      assert.match(entry.tableName, /^mqtt_msg_topics_described/);

      const { topics } = await ok(server, mq('describeTopics', token, { topics: [topic] }));
      assert.equal(topics.length, 1);
      const described = topics[0];
      assert.equal(described.topic, topic);
      assert.equal(described.tableName, entry.tableName);
      assert.equal(described.messageCount, 3);
      assert.equal(described.firstMessageId, messageIds[0]);
      assert.equal(described.lastMessageId, messageIds[2]);
      assert.equal(typeof described.firstMessageTime, 'string');
      assert.ok(described.lastMessageTime >= described.firstMessageTime);
      assert.deepEqual(described.subscribers, [client.options.clientId]);

      const all = await ok(server, mq('describeTopics', token));
      assert.ok(all.topics.some((t: any) => t.topic === topic && t.messageCount === 3));
      await fails(server, mq('describeTopics', token, { topics: [unique('never')] }), 14244);
    } finally {
      await closeClients(client);
    }
  });

  it('deletes a topic: its messages, its catalog entry and its retained message', async function () {
    const topic = unique('topics/deleted');
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1 }, { payload: 'kept', mqttPayloadType: 'utf8', retain: true }] }));
    assert.equal(storedCount(server, topic), 2);
    const deleted = await ok(server, mq('deleteTopic', token, { topic }));
    assert.deepEqual(deleted, { topic, deletedMessages: 2 });
    assert.equal(storedCount(server, topic), 0);
    assert.ok(!(await ok(server, mq('listTopics', token))).topics.some((t: any) => t.topic === topic));
    await fails(server, mq('getMessagesFromMqTopic', token, { topic }), 14244);
    await fails(server, mq('deleteTopic', token, { topic }), 14244);

    // No retained message is sent to a new subscriber; a marker published after proves it.
    const client = await connectClient(server);
    try {
      const inbox = new Inbox(client);
      await subscribe(client, topic);
      await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 'marker', mqttPayloadType: 'utf8' }] }));
      assert.deepEqual(await inbox.before(topic), []);
    } finally {
      await closeClients(client);
    }
  });

  it('authorizes per topic: reader lists and describes, may not delete', async function () {
    const topic = unique('topics/guarded');
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1 }] }));
    await ok(server, admin('createAccount', token, { username: 'topic-reader', password: 'pw-reader', roles: ['reader'] }));
    const reader = await login(server, 'topic-reader', 'pw-reader');
    assert.ok((await ok(server, mq('listTopics', reader))).topics.some((t: any) => t.topic === topic));
    assert.equal((await ok(server, mq('describeTopics', reader, { topics: [topic] }))).topics[0].messageCount, 1);
    await fails(server, mq('deleteTopic', reader, { topic }), 12030);
    assert.equal(storedCount(server, topic), 1);
    await fails(server, mq('deleteTopic', token, {}), 12025);
    await fails(server, mq('listTopics', token, { databaseName: '' }), 12012);
  });
});
