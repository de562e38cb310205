/**
 * A topic's integration table is the topic: one resource, one decision (docs/roles.md, "One
 * resource, two names"). Through real HTTP (REST and JSON actions) and a real MQTT broker: a deny
 * on the topic holds for its table, a deny on the table holds for the topic, listings leave out
 * what the caller may not see, and deleting the table deletes the topic through the message core.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { startServer, tempDataDir } from '../helpers/server';
import { MQTT_PORTS } from '../mqtt/mqtt-helpers';
import { closeClients, connectClient, connectWithInbox, publish, subscribe, PUBSUB_WITH_TABLES_PLUGINS } from '../mqtt/pubsub-helpers';
import { admin, db, fails as actionFails, login, ok as actionOk } from '../actions/action-client';
import { mq } from '../actions/mq/mq-client';
import { publishCode } from '../mqtt/session-helpers';
import { fails, ok, restClient, startRestServer, type Auth, type RestClient } from './rest-client';

const NO_B: Auth = ['nob', 'nob-password-1'];
const NO_TABLE: Auth = ['notable', 'notable-password-1'];
const TABLE_ONLY: Auth = ['tableonly', 'tableonly-password-1'];

describe('a topic and its integration table are one resource', function () {
  this.timeout(60_000);
  let server: TestServer;
  let rest: RestClient;
  let root: string;
  let noB: string;
  let noTable: string;
  let tableOnly: string;
  let secretId: number;

  before(async function () {
    server = await startServer({ plugins: PUBSUB_WITH_TABLES_PLUGINS, ...MQTT_PORTS });
    rest = restClient(server.http);
    root = await login(server);
    // Everything, except the b/ topics (by their topic names).
    await actionOk(server, admin('createRole', root, {
      roleName: 'no_b', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['topic:b/#'] }],
    }));
    // Everything, except the integration table of b/x (by its table name).
    await actionOk(server, admin('createRole', root, {
      roleName: 'no_table', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['table:main/mqtt_msg_b_x'] }],
    }));
    // Every table of main, and no topic: the tables of topics are the topics.
    await actionOk(server, admin('createRole', root, {
      roleName: 'table_only', grants: [{ commands: ['record.*', 'table.*', 'cursor.*', 'index.*'], resources: ['database:main', 'table:main/*'] }],
    }));
    for (const [[username, password], role] of [[NO_B, 'no_b'], [NO_TABLE, 'no_table'], [TABLE_ONLY, 'table_only']] as const) {
      await actionOk(server, admin('createAccount', root, { username, password, roles: [role] }));
    }
    noB = await login(server, NO_B![0], NO_B![1]);
    noTable = await login(server, NO_TABLE![0], NO_TABLE![1]);
    tableOnly = await login(server, TABLE_ONLY![0], TABLE_ONLY![1]);

    // Real MQTT publishes create the topics and their tables.
    const publisher = await connectClient(server);
    try {
      for (const topic of ['b/secret', 'b/x', 'b/y', 'a/open']) await publish(publisher, topic, JSON.stringify({ topic }), { qos: 1 });
      await publish(publisher, 'b/del', 'kept', { qos: 1, retain: true });
      await publish(publisher, 'b/x', 'retained secret', { qos: 1, retain: true });
    } finally {
      await closeClients(publisher);
    }
    const log = server.engine.need('storage').messageLog;
    assert.equal(log.getTopic('b/secret')!.table, 'mqtt_msg_b_secret');
    secretId = log.readTopic('b/secret', { limit: 1 })[0].sequence;
  });
  after(async function () {
    await server?.close();
  });

  describe('a deny on the topic holds for its table', function () {
    it('refuses REST GET /record and POST /query on the table', async function () {
      fails(await rest.get(`/record/main/mqtt_msg_b_secret/${secretId}`, NO_B), 403, 12030);
      fails(await rest.post('/query/main/mqtt_msg_b_secret/create_ts_idx?top=10', { find: { create_ts: { operator: '>=', value: '2000-01-01T00:00:00.000' } } }, NO_B), 403, 12030);
      // The same account reads another topic's table.
      const open = server.engine.need('storage').messageLog.readTopic('a/open', { limit: 1 })[0].sequence;
      assert.equal(ok(await rest.get(`/record/main/mqtt_msg_a_open/${open}`, NO_B)).mqtt_qos, 1);
    });

    it('refuses getRecordsByTable (also as a cursor), getRecordsByIndex, getRecordsInKeyRange and getRecordsByIds', async function () {
      await actionFails(server, db('getRecordsByTable', noB, { tableName: 'mqtt_msg_b_secret' }), 12030);
      await actionFails(server, db('getRecordsByTable', noB, { tableName: 'mqtt_msg_b_secret', returnCursor: true }), 12030);
      await actionFails(server, db('getRecordsByIndex', noB, { tableName: 'mqtt_msg_b_secret', indexName: 'create_ts_idx' }), 12030);
      await actionFails(server, db('getRecordsInKeyRange', noB, { tableName: 'mqtt_msg_b_secret', indexName: 'create_ts_idx' }), 12030);
      await actionFails(server, db('getRecordsByIds', noB, { tableName: 'MQTT_MSG_B_SECRET', ids: [secretId] }), 12030);
      const open = await actionOk(server, db('getRecordsByTable', noB, { tableName: 'mqtt_msg_a_open' }));
      assert.equal(open.returnedRecordCount, 1);
    });

    it('refuses index and column changes, record writes (also inside a transaction) and the index listing on the table', async function () {
      await actionFails(server, db('createIndex', noB, { tableName: 'mqtt_msg_b_secret', indexName: 'by_qos', fields: [{ name: 'mqtt_qos' }] }), 12030);
      await actionFails(server, db('alterTable', noB, { tableName: 'mqtt_msg_b_secret', addFields: [{ name: 'extra', type: 'integer' }] }), 12030);
      await actionFails(server, db('deleteRecords', noB, { tableName: 'mqtt_msg_b_secret', ids: [secretId] }), 12030);
      const { transactionId } = await actionOk(server, db('createTransaction', noB));
      await actionFails(server, db('insertRecords', noB, { tableName: 'mqtt_msg_b_secret', transactionId, sourceData: [{ mqtt_qos: 0 }] }), 12030);
      await actionOk(server, db('rollbackTransaction', noB, { transactionId }));
      fails(await rest.get('/index/main/mqtt_msg_b_secret', NO_B), 403, 12030);
    });

    it('refuses DELETE /table and deleteTables: the topic and its messages stay', async function () {
      fails(await rest.del('/table/main/mqtt_msg_b_del', NO_B), 403, 12030);
      await actionFails(server, db('deleteTables', noB, { tableNames: ['mqtt_msg_b_del'] }), 12030);
      assert.equal(server.engine.need('storage').messageLog.countTopic('b/del'), 1);
    });

    it('leaves the topic\'s table out of GET /table, listTables and describeTables', async function () {
      const listed: string[] = ok(await rest.get('/table/main', NO_B))._tables;
      assert.ok(listed.includes('mqtt_msg_a_open'), listed.join());
      assert.deepEqual(listed.filter((name) => name.startsWith('mqtt_msg_b_')), []);
      const tables = await actionOk(server, db('listTables', noB));
      assert.deepEqual(tables.data.map((t: any) => t.tableName).filter((name: string) => name.startsWith('mqtt_msg_b_')), []);
      const described = await actionOk(server, db('describeTables', noB));
      assert.deepEqual(described.data.map((t: any) => t.tableName).filter((name: string) => name.startsWith('mqtt_msg_b_')), []);
      const topics = await actionOk(server, mq('listTopics', noB));
      assert.deepEqual(topics.topics.map((t: any) => t.topic).filter((topic: string) => topic.startsWith('b/')), []);
    });

    it('leaves the topics out of the explorer\'s reads: browseTopics and listRetainedMessages', async function () {
      const tree = await actionOk(server, mq('browseTopics', noB));
      assert.deepEqual(tree.nodes.map((node: any) => node.name).filter((name: string) => name === 'b'), []);
      assert.ok(tree.nodes.some((node: any) => node.name === 'a'));
      const retained = await actionOk(server, mq('listRetainedMessages', noB, { topicFilter: 'b/#' }));
      assert.equal(retained.total, 0);
      assert.equal((await actionOk(server, mq('listRetainedMessages', noTable, { topicFilter: 'b/#' }))).total, 1, 'b/del only: b/x is denied to notable by its table name');
    });
  });

  describe('a deny on the table holds for its topic', function () {
    it('refuses getMessagesFromMqTopic by table name and by topic', async function () {
      await actionFails(server, mq('getMessagesFromMqTopic', noTable, { tableName: 'mqtt_msg_b_x' }), 12030);
      await actionFails(server, mq('getMessagesFromMqTopic', noTable, { topic: 'b/x' }), 12030);
      await actionFails(server, mq('describeTopics', noTable, { topics: ['b/x'] }), 12030);
      await actionFails(server, mq('publishMessagesToMq', noTable, { tableName: 'mqtt_msg_b_x', messages: [{ payload: 1 }] }), 12030);
      const other = await actionOk(server, mq('getMessagesFromMqTopic', noTable, { topic: 'b/y' }));
      assert.equal(other.messages.length, 1);
    });

    it('withholds the topic\'s messages from an MQTT subscriber of b/#, leaves it out of listTopics and refuses deleteTopic', async function () {
      const { client, inbox } = await connectWithInbox(server, { username: NO_TABLE![0], password: NO_TABLE![1] });
      const publisher = await connectClient(server);
      try {
        assert.deepEqual(await subscribe(client, 'b/#', { qos: 1 }), [1]);
        await publish(publisher, 'b/x', 'hidden', { qos: 1 });
        await publish(publisher, 'b/y', 'marker', { qos: 1 });
        const earlier = await inbox.before('b/y');
        assert.deepEqual(earlier.filter((m) => m.topic !== 'b/del').map((m) => `${m.topic} ${m.payload}`), []);
      } finally {
        await closeClients(client, publisher);
      }
      const topics = await actionOk(server, mq('listTopics', noTable));
      const names = topics.topics.map((t: any) => t.topic);
      assert.ok(names.includes('b/y') && !names.includes('b/x'), names.join());
      await actionFails(server, mq('deleteTopic', noTable, { topic: 'b/x' }), 12030);
    });

    it('refuses an MQTT publish to the topic (PUBACK 0x87)', async function () {
      const client = await connectClient(server, { username: NO_TABLE![0], password: NO_TABLE![1] });
      try {
        assert.equal(await publishCode(client, 'b/x', 'from notable', { qos: 1 }), 0x87);
        assert.equal(await publishCode(client, 'b/y', 'from notable', { qos: 1 }), 0);
      } finally {
        await closeClients(client);
      }
    });
  });

  describe('cursors and new topics', function () {
    it('refuses the next fetch of a cursor on the table once a role denies the topic', async function () {
      const account: Auth = ['cursorer', 'cursorer-password-1'];
      await actionOk(server, admin('createRole', root, { roleName: 'cursoring', grants: [{ commands: ['*'], resources: ['*'] }] }));
      await actionOk(server, admin('createAccount', root, { username: account![0], password: account![1], roles: ['cursoring'] }));
      const token = await login(server, account![0], account![1]);
      const opened = await actionOk(server, db('getRecordsByTable', token, { tableName: 'mqtt_msg_b_y', returnCursor: true, maxRecords: 1 }));
      assert.equal(typeof opened.cursorId, 'string');
      await actionOk(server, admin('alterRole', root, { roleName: 'cursoring', denies: [{ commands: ['mq.retrieve'], resources: ['topic:b/y'] }] }));
      await actionFails(server, db('getRecordsFromCursor', token, { cursorId: opened.cursorId }), 12030);
    });

    it('applies a deny written on a table name to the MQTT publishes after the one that created its topic', async function () {
      const client = await connectClient(server, { username: NO_TABLE![0], password: NO_TABLE![1] });
      try {
        await actionOk(server, admin('alterRole', root, {
          roleName: 'no_table', denies: [{ commands: ['*'], resources: ['table:main/mqtt_msg_b_x', 'table:main/mqtt_msg_n_fresh'] }],
        }));
        // The first publish creates the topic (it had no table to deny yet); the table's deny holds from then on.
        assert.equal(await publishCode(client, 'n/fresh', 'first', { qos: 1 }), 0);
        assert.equal(server.engine.need('storage').messageLog.getTopic('n/fresh')?.table, 'mqtt_msg_n_fresh');
        assert.equal(await publishCode(client, 'n/fresh', 'second', { qos: 1 }), 0x87);
      } finally {
        await closeClients(client);
      }
    });
    it('applies a deny written on a table name to the MQTT publishes after the one that created its topic, also when another topic was deleted just before (the topic count is back where it was)', async function () {
      const client = await connectClient(server, { username: NO_TABLE![0], password: NO_TABLE![1] });
      const publisher = await connectClient(server);
      try {
        await actionOk(server, admin('alterRole', root, {
          roleName: 'no_table', denies: [{ commands: ['*'], resources: ['table:main/mqtt_msg_b_x', 'table:main/mqtt_msg_n_after_delete'] }],
        }));
        // A topic routed (the message core notes how many topics the log has), then deleted.
        await publish(publisher, 'gone/soon', 'x', { qos: 1 });
        await actionOk(server, mq('deleteTopic', root, { topic: 'gone/soon' }));
        assert.equal(await publishCode(client, 'n/after_delete', 'first', { qos: 1 }), 0);
        assert.equal(server.engine.need('storage').messageLog.getTopic('n/after_delete')?.table, 'mqtt_msg_n_after_delete');
        assert.equal(await publishCode(client, 'n/after_delete', 'second', { qos: 1 }), 0x87, 'the table\'s deny holds once the topic has its table');
      } finally {
        await closeClients(client, publisher);
      }
    });
  });

  describe('a grant on the table name alone does not reach a topic', function () {
    it('reads ordinary tables but no topic\'s table, and lists none', async function () {
      ok(await rest.post('/table/main/plain_rows', { fields: [{ name: 'v', type: 'integer' }] }));
      ok(await rest.post('/record/main/plain_rows', { v: 1 }));
      assert.equal(ok(await rest.get('/record/main/plain_rows/1', TABLE_ONLY)).v, 1);
      const open = server.engine.need('storage').messageLog.readTopic('a/open', { limit: 1 })[0].sequence;
      fails(await rest.get(`/record/main/mqtt_msg_a_open/${open}`, TABLE_ONLY), 403, 12030);
      await actionFails(server, db('getRecordsByTable', tableOnly, { tableName: 'mqtt_msg_a_open' }), 12030);
      const listed: string[] = ok(await rest.get('/table/main', TABLE_ONLY))._tables;
      assert.deepEqual(listed.filter((name) => name.startsWith('mqtt_msg_')), []);
      assert.ok(listed.includes('plain_rows'));
    });
  });

  describe('deleting a topic\'s table deletes the topic through the message core', function () {
    it('DELETE /table drops the messages and the retained message: none is listed, a new subscriber gets none', async function () {
      const listedBefore = await actionOk(server, mq('listRetainedMessages', root, { topicFilter: 'b/del' }));
      assert.equal(listedBefore.total, 1);
      ok(await rest.del('/table/main/mqtt_msg_b_del'));
      const log = server.engine.need('storage').messageLog;
      assert.equal(log.getTopic('b/del'), undefined);
      assert.equal((await actionOk(server, mq('listRetainedMessages', root, { topicFilter: 'b/del' }))).total, 0);
      assert.ok(!ok(await rest.get('/table/main'))._tables.includes('mqtt_msg_b_del'));

      const { client, inbox } = await connectWithInbox(server);
      const publisher = await connectClient(server);
      try {
        await subscribe(client, 'b/del', { qos: 1 });
        await publish(publisher, 'b/del', 'marker', { qos: 1 });
        assert.deepEqual((await inbox.before('b/del')).map((m) => m.payload.toString()), [], 'no retained message before the marker');
      } finally {
        await closeClients(client, publisher);
      }
    });

    it('deleteTables on a topic\'s table and an ordinary one deletes both', async function () {
      ok(await rest.post('/table/main/plain_gone', { fields: [{ name: 'v', type: 'integer' }] }));
      const publisher = await connectClient(server);
      try {
        await publish(publisher, 'c/gone', 'last', { qos: 1, retain: true });
      } finally {
        await closeClients(publisher);
      }
      await actionOk(server, db('deleteTables', root, { tableNames: ['plain_gone', 'mqtt_msg_c_gone'] }));
      assert.equal(server.engine.need('storage').messageLog.getTopic('c/gone'), undefined);
      assert.equal((await actionOk(server, mq('listRetainedMessages', root, { topicFilter: 'c/gone' }))).total, 0);
      assert.ok(!ok(await rest.get('/table/main'))._tables.includes('plain_gone'));
    });
  });
});

describe('a topic deleted through its table stays deleted across a restart', function () {
  this.timeout(60_000);

  it('no retained message comes back to a new subscriber after DELETE /table and a restart', async function () {
    const dataDir = tempDataDir('engine-topic-table');
    const settings = { plugins: PUBSUB_WITH_TABLES_PLUGINS, ...MQTT_PORTS, data_dir: dataDir };
    const first = await startServer(settings);
    try {
      const publisher = await connectClient(first);
      try {
        await publish(publisher, 'r/kept', 'stays', { qos: 1, retain: true });
        await publish(publisher, 'r/gone', 'retained', { qos: 1, retain: true });
      } finally {
        await closeClients(publisher);
      }
      ok(await restClient(first.http).del('/table/main/mqtt_msg_r_gone'));
    } finally {
      await first.close({ keepData: true });
    }
    const second = await startServer(settings);
    try {
      const retained = await actionOk(second, mq('listRetainedMessages', await login(second), { topicFilter: 'r/#' }));
      assert.equal(retained.messages.map((m: any) => m.topic).join(), 'r/kept');
      assert.equal(retained.total, 1, 'no retained pointer is left for r/gone');
      const { client, inbox } = await connectWithInbox(second);
      const publisher = await connectClient(second);
      try {
        await subscribe(client, 'r/gone', { qos: 1 });
        await publish(publisher, 'r/gone', 'marker', { qos: 1 });
        assert.deepEqual((await inbox.before('r/gone')).map((m) => m.payload.toString()), []);
      } finally {
        await closeClients(client, publisher);
      }
    } finally {
      await second.close();
    }
  });
});

describe('a topic and its table are one resource without the message core too', function () {
  it('a REST-only server (no messaging plugin) refuses a topic-denied account its table, and hides it', async function () {
    const server = await startRestServer();
    try {
      const log = server.engine.need('storage').messageLog;
      const message = {
        createTs: '2024-01-01T00:00:00.000', payload: { type: 'string' as const, value: 'secret' }, qos: 0, retain: false, contentType: null,
        correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null, payloadFormat: null, publisher: null,
      };
      const [id] = await log.append([{ topic: 'b/secret', message }]);
      await server.engine.roles.create({ name: 'no_b', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['*'], resources: ['topic:b/#'] }] });
      await server.engine.accounts.create(NO_B![0], NO_B![1], ['no_b']);
      const rest = restClient(server.http);
      fails(await rest.get(`/record/main/mqtt_msg_b_secret/${id}`, NO_B), 403, 12030);
      assert.deepEqual(ok(await rest.get('/table/main', NO_B))._tables, []);
      assert.deepEqual(ok(await rest.get('/table/main'))._tables, ['mqtt_msg_b_secret']);
    } finally {
      await server.close();
    }
  });
});
