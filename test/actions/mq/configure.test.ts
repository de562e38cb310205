/**
 * configureTopic over real HTTP: retention by count and by age trims a topic's oldest messages,
 * never those an offline MQTT session still owes, never the retained message.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../../helpers/server';
import { ManualClock } from '../../helpers/manual-clock';
import { MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { closeClients, connectWithInbox, subscribe, unique } from '../../mqtt/pubsub-helpers';
import { admin, fails, login, ok } from '../action-client';
import { MQ_PLUGINS, mq, storedCount, topicMessages } from './mq-client';

describe('mq actions: configureTopic (retention)', function () {
  let server: TestServer;
  let token: string;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  before(async function () {
    server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS }, { clock });
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  async function publishNumbers(topic: string, from: number, to: number, extra: Record<string, unknown> = {}): Promise<number[]> {
    const messages = [];
    for (let i = from; i <= to; i++) messages.push({ payload: i, qos: 1, ...extra });
    return (await ok(server, mq('publishMessagesToMq', token, { topic, messages }))).messageIds;
  }

  async function messageCount(topic: string): Promise<number> {
    return (await ok(server, mq('describeTopics', token, { topics: [topic] }))).topics[0].messageCount;
  }

  /** One run of the retention timer, as it runs every 10 s. */
  function tick(): Promise<unknown> {
    return server.engine.need('topicRetention').run(clock.now());
  }

  it('a count limit keeps the newest messages, at once and as more are published', async function () {
    const topic = unique('retention/count');
    await publishNumbers(topic, 1, 10);
    const result = await ok(server, mq('configureTopic', token, { topic, retentionMessages: 3 }));
    assert.deepEqual(result, { topic, retentionSeconds: null, retentionMessages: 3 });
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [8, 9, 10]);
    assert.equal(await messageCount(topic), 3, 'the integration table holds the newest 3');

    await publishNumbers(topic, 11, 12);
    await tick();
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [10, 11, 12]);
    assert.deepEqual(server.engine.need('topicRetention').status(topic), { policy: { maxMessages: 3 }, trimmedMessages: 9, heldBackBy: [] });

    // An absent limit stays; 0 (or null) removes it: nothing is trimmed any more.
    assert.deepEqual(await ok(server, mq('configureTopic', token, { topic, retentionSeconds: 3600 })), { topic, retentionSeconds: 3600, retentionMessages: 3 });
    assert.deepEqual(await ok(server, mq('configureTopic', token, { topic, retentionMessages: 0, retentionSeconds: null })), { topic, retentionSeconds: null, retentionMessages: null });
    await publishNumbers(topic, 13, 14);
    await tick();
    assert.equal(await messageCount(topic), 5);
  });

  it('an age limit trims messages older than now − retentionSeconds (engine clock)', async function () {
    const topic = unique('retention/age');
    await publishNumbers(topic, 1, 3);
    clock.advanceSeconds(100);
    await publishNumbers(topic, 4, 5);
    await ok(server, mq('configureTopic', token, { topic, retentionSeconds: 60 }));
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [4, 5]);
    clock.advanceSeconds(59);
    await tick();
    assert.equal(storedCount(server, topic), 2, 'not yet older than 60 s');
    clock.advanceSeconds(2);
    await tick();
    assert.equal(storedCount(server, topic), 0);
    assert.equal(await messageCount(topic), 0, 'the topic stays, empty');
  });

  it('a policy may precede its topic, and survives a restart', async function () {
    const topic = unique('retention/future');
    assert.deepEqual(await ok(server, mq('configureTopic', token, { topic, retentionMessages: 2 })), { topic, retentionSeconds: null, retentionMessages: 2 });
    await publishNumbers(topic, 1, 4);
    await tick();
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [3, 4]);
    await server.close({ keepData: true });
    server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS, data_dir: server.dataDir }, { clock });
    token = await login(server);
    assert.deepEqual(server.engine.need('topicRetention').get(topic), { maxMessages: 2 });
    await publishNumbers(topic, 5, 5);
    await tick();
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [4, 5]);
  });

  it('an offline persistent session holds trimming back at its position and gets every message on reconnect', async function () {
    const topic = unique('retention/owed');
    const clientId = unique('retention-session');
    const session = { clientId, clean: false, properties: { sessionExpiryInterval: 3600 } };
    const first = await connectWithInbox(server, session);
    await subscribe(first.client, topic, { qos: 1 });
    await closeClients(first.client);
    let second: Awaited<ReturnType<typeof connectWithInbox>> | undefined;
    try {
      await publishNumbers(topic, 1, 5);
      await ok(server, mq('configureTopic', token, { topic, retentionMessages: 2 }));
      assert.equal(storedCount(server, topic), 5, 'the offline session still owes all 5');
      assert.deepEqual(server.engine.need('topicRetention').status(topic).heldBackBy, [clientId], 'and says so');
      const described = (await ok(server, mq('describeTopics', token, { topics: [topic] }))).topics[0];
      assert.deepEqual(described.retention.heldBackBy, [clientId], 'describeTopics says so too');

      second = await connectWithInbox(server, session);
      assert.equal(second.connack.sessionPresent, true);
      const received = [];
      for (let i = 0; i < 5; i++) received.push(JSON.parse((await second.inbox.next(topic)).payload.toString()));
      assert.deepEqual(received, [1, 2, 3, 4, 5]);
      // A round trip after the PUBACKs: the broker has handled them (packets are handled in order).
      await subscribe(second.client, `${topic}/other`);
      await tick();
      assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), [4, 5], 'delivered: trimmed now');
      assert.deepEqual(server.engine.need('topicRetention').status(topic).heldBackBy, []);
    } finally {
      await closeClients(second?.client);
      const { client } = await connectWithInbox(server, { clientId, clean: true }); // ends the session
      await closeClients(client);
    }
  });

  it('never trims the retained message', async function () {
    const topic = unique('retention/retained');
    const [retainedId] = await publishNumbers(topic, 1, 1, { retain: true });
    const ids = await publishNumbers(topic, 2, 5);
    await ok(server, mq('configureTopic', token, { topic, retentionMessages: 1 }));
    assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.id), [retainedId, ids[3]]);
    const { client, inbox } = await connectWithInbox(server);
    try {
      await subscribe(client, topic);
      assert.equal((await inbox.next(topic)).payload.toString(), '1', 'a new subscriber still gets it');
    } finally {
      await closeClients(client);
    }
  });

  it('describeTopics counts the messages of the last minute, hour and day (engine clock)', async function () {
    const topic = unique('rates/topic');
    // Moving the clock by hours ends idle sessions: a new token after each move.
    const advance = async (seconds: number) => { clock.advanceSeconds(seconds); token = await login(server); };
    await publishNumbers(topic, 1, 4); // two days ago, from now on
    await advance(2 * 86_400 - 2 * 3600);
    await publishNumbers(topic, 5, 7); // two hours ago
    await advance(2 * 3600 - 120);
    await publishNumbers(topic, 8, 9); // two minutes ago
    await advance(120 - 10);
    await publishNumbers(topic, 10, 10); // ten seconds ago
    await advance(10);
    const described = (await ok(server, mq('describeTopics', token, { topics: [topic] }))).topics[0];
    assert.deepEqual([described.messagesLastMinute, described.messagesLastHour, described.messagesLastDay, described.messageCount], [1, 3, 6, 10]);
  });

  it('refuses bad params and callers without topic.configure', async function () {
    await fails(server, mq('configureTopic', token, { topic: 'retention/+', retentionMessages: 1 }), 14243);
    await fails(server, mq('configureTopic', token, { topic: 'retention/#' }), 14243);
    await fails(server, mq('configureTopic', token, { topic: 'retention/x', retentionMessages: -1 }), 12012);
    await fails(server, mq('configureTopic', token, { topic: 'retention/x', retentionSeconds: 1.5 }), 12012);
    await fails(server, mq('configureTopic', token, { topic: 'retention/x', retentionSeconds: 'ten' }), 12012);
    await fails(server, mq('configureTopic', token, { retentionMessages: 1 }), 12025);
    await ok(server, admin('createAccount', token, { username: 'retention-reader', password: 'pw-reader', roles: ['reader'] }));
    const reader = await login(server, 'retention-reader', 'pw-reader');
    await fails(server, mq('configureTopic', reader, { topic: 'retention/x', retentionMessages: 1 }), 12030);
    assert.equal(server.engine.need('topicRetention').get('retention/x'), undefined);
  });
});
