/**
 * Transform fields (configureTopic `transformSteps`, docs/storage.md "Transform fields") through
 * the real protocols: declared with the mq action, computed for messages published over MQTT,
 * read with getMessagesFromMqTopic, REST records and index queries, db actions and filters;
 * bad payloads, removing a field, a back-fill of 100,000 messages while a publisher runs, and a
 * restart.
 */
import assert from 'node:assert/strict';
import { call, startServer, type TestServer } from '../../helpers/server';
import { MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { closeClients, connectClient, publish, unique } from '../../mqtt/pubsub-helpers';
import { db, fails, login, ok } from '../action-client';
import { MQ_PLUGINS, mq, topicMessages } from './mq-client';

const PLUGINS = [...MQ_PLUGINS, 'rest'];

const SENSOR_STEPS = [{
  transformStepMethod: 'jsonToTableFields',
  mapOfPropertiesToFields: [
    { recordPath: 'source_payload.temperature', fieldName: 'temperature', type: 'float', indexName: 'by_temperature' },
    { recordPath: 'source_payload.line', fieldName: 'line', type: 'varchar', length: 8 },
    { recordPath: 'source_payload.status.ok', fieldName: 'ok', type: 'bit' },
  ],
}];

describe('mq actions: transform fields (configureTopic transformSteps)', function () {
  this.timeout(180_000);
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startServer({ plugins: PLUGINS, ...MQTT_PORTS });
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  const database = (): string => server.engine.settings.default_database_name;

  async function tableOf(topic: string): Promise<string> {
    const described = await ok(server, mq('describeTopics', token, { topics: [topic] }));
    return described.topics[0].tableName as string;
  }

  /** describeTopics until the topic's back-fill is over (each turn waits for a real HTTP answer). */
  async function backfillDone(topic: string): Promise<any> {
    for (;;) {
      const described = await ok(server, mq('describeTopics', token, { topics: [topic] }));
      if (described.topics[0].transform.backfill.state === 'idle') return described.topics[0].transform;
    }
  }

  async function publishMqtt(topic: string, payloads: unknown[]): Promise<void> {
    const client = await connectClient(server);
    try {
      for (const p of payloads) await publish(client, topic, typeof p === 'string' ? p : JSON.stringify(p), { qos: 1 });
    } finally {
      await closeClients(client);
    }
  }

  it('declared fields become columns: MQTT messages are transformed and found through an index over REST, db actions and filters', async function () {
    const topic = unique('plant/line1/sensor');
    const configured = await ok(server, mq('configureTopic', token, { topic, transformSteps: SENSOR_STEPS }));
    assert.deepEqual(configured.transformSteps[0].mapOfPropertiesToFields.map((f: any) => [f.fieldName, f.type, f.indexName]), [
      ['temperature', 'float', 'by_temperature'], ['line', 'varchar', null], ['ok', 'bit', null],
    ]);
    await publishMqtt(topic, [
      { temperature: 21.5, line: 'L1', status: { ok: true } },
      { temperature: 19, line: 'L2', status: { ok: false } },
      { temperature: 25.25, line: 'L1', status: { ok: true } },
    ]);

    const messages = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.deepEqual(messages.map((m) => m.transformFields), [
      { temperature: 21.5, line: 'L1', ok: true },
      { temperature: 19, line: 'L2', ok: false },
      { temperature: 25.25, line: 'L1', ok: true },
    ]);
    assert.deepEqual(messages.map((m) => [m.error, m.log]), [[false, null], [false, null], [false, null]]);
    const without = await topicMessages(server, token, topic);
    assert.equal(without[0].transformFields, undefined, 'only with includeTransformFields');

    const table = await tableOf(topic);
    // REST: a query through the index over a transform field, and a record read.
    const found = await call('POST', `${server.http}/engine/api/v1/query/${database()}/${table}/by_temperature?top=10`, {
      body: { find: { temperature: { operator: '>=', value: 20 } }, select: ['temperature', 'line'] },
    });
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(found.json._records.map((r: any) => [r.temperature, r.line]), [[21.5, 'L1'], [25.25, 'L1']]);
    const record = await call('GET', `${server.http}/engine/api/v1/record/${database()}/${table}/${messages[1].id}`);
    assert.equal(record.status, 200, record.text);
    assert.equal(record.json.temperature, 19);
    assert.equal(record.json.line, 'L2');
    assert.equal(record.json.ok, false);
    const indexes = await call('GET', `${server.http}/engine/api/v1/index/${database()}/${table}`);
    assert.ok(indexes.json._indexes.includes('by_temperature'), indexes.text);

    // db actions: getRecordsByIndex (largest first), a filter on a field without an index, describeTables.
    const objects = { responseOptions: { dataFormat: 'objects' } };
    const byIndex = await ok(server, db('getRecordsByIndex', token, { tableName: table, indexName: 'by_temperature', reverseOrder: true }, objects));
    assert.deepEqual(byIndex.data.map((r: any) => r.temperature), [25.25, 21.5, 19]);
    const filtered = await ok(server, db('getRecordsByTable', token, { tableName: table, tableFilter: "line == 'L2'" }, objects));
    assert.deepEqual(filtered.data.map((r: any) => r.temperature), [19]);
    const described = await ok(server, db('describeTables', token, { tableNames: [table] }));
    const columns = described.data[0].fields.map((f: any) => [f.name, f.type]);
    assert.deepEqual(columns.slice(-3), [['temperature', 'float'], ['line', 'varchar'], ['ok', 'bit']]);
  });

  it('a payload without the property, with the wrong type, or not JSON gets null there, and error / log say why', async function () {
    const topic = unique('plant/bad');
    await ok(server, mq('configureTopic', token, { topic, transformSteps: SENSOR_STEPS }));
    await publishMqtt(topic, [
      { line: 'L1', status: { ok: true } },
      { temperature: 'hot', line: 'L1-too-long', status: { ok: 1 } },
      'not json at all',
    ]);
    const messages = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.deepEqual(messages.map((m) => m.transformFields), [
      { temperature: null, line: 'L1', ok: true },
      { temperature: null, line: null, ok: null },
      { temperature: null, line: null, ok: null },
    ]);
    assert.deepEqual(messages.map((m) => m.error), [true, true, true]);
    assert.deepEqual(messages[0].log, [{ fieldName: 'temperature', recordPath: 'source_payload.temperature', reason: 'the property is missing' }]);
    assert.deepEqual(messages[1].log.map((l: any) => [l.fieldName, l.reason]), [
      ['temperature', 'expected a number, found a string'], ['line', 'longer than 8 characters'], ['ok', 'expected a boolean, found a number'],
    ]);
    assert.match(messages[2].log[0].reason, /not JSON/);
    // The integration table's error and log columns say the same.
    const table = await tableOf(topic);
    const rows = await ok(server, db('getRecordsByTable', token, { tableName: table }, { responseOptions: { dataFormat: 'objects' } }));
    assert.deepEqual(rows.data.map((r: any) => r.error), [true, true, true]);
    assert.equal(rows.data[0].log[0].fieldName, 'temperature');
  });

  it('a json field nested too deeply reads null with its reason, and the other messages of the turn are stored', async function () {
    const topic = unique('plant/deep');
    const steps = [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.doc', fieldName: 'doc', type: 'json' }] }];
    await ok(server, mq('configureTopic', token, { topic, transformSteps: steps }));
    const deep = `{"doc":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const client = await connectClient(server);
    try {
      // Sent in one turn: the deep one between two ordinary ones.
      await Promise.all([
        publish(client, topic, '{"doc":{"a":1}}', { qos: 1 }), publish(client, topic, deep, { qos: 1 }), publish(client, topic, '{"doc":[2]}', { qos: 1 }),
      ]);
    } finally {
      await closeClients(client);
    }
    const messages = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.deepEqual(messages.map((m) => m.transformFields.doc), [{ a: 1 }, null, [2]]);
    assert.equal(messages[1].log[0].reason, 'nested deeper than 512 levels');
  });

  it('a bad declaration is refused with 12012 and changes nothing', async function () {
    const topic = unique('plant/refused');
    await ok(server, mq('configureTopic', token, { topic, transformSteps: SENSOR_STEPS }));
    const cases: unknown[] = [
      [{ transformStepMethod: 'tableFieldsToJson', mapOfPropertiesToFields: [] }],
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'payload.x', fieldName: 'x', type: 'float' }] }],
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.x', fieldName: 'x', type: 'variant' }] }],
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.x', fieldName: 'create_ts', type: 'float' }] }],
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.x', fieldName: 'x', type: 'float' }, { recordPath: 'source_payload.y', fieldName: 'X', type: 'float' }] }],
      // An index the field's type cannot have (a JSON value, a varchar too long for a key).
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.x', fieldName: 'x', type: 'json', indexName: 'by_x' }] }],
      [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.x', fieldName: 'x', type: 'varchar', indexName: 'by_x' }] }],
    ];
    for (const transformSteps of cases) await fails(server, mq('configureTopic', token, { topic, transformSteps }), 12012);
    const described = await ok(server, mq('describeTopics', token, { topics: [topic] }));
    assert.deepEqual(described.topics[0].transform.fields.map((f: any) => f.fieldName), ['temperature', 'line', 'ok']);
  });

  it('removing a field drops its column and index; adding one to a topic with messages back-fills it', async function () {
    const topic = unique('plant/change');
    await ok(server, mq('configureTopic', token, { topic, transformSteps: SENSOR_STEPS }));
    await publishMqtt(topic, [{ temperature: 20, line: 'L1', status: { ok: true }, pressure: 1.5 }]);
    const table = await tableOf(topic);
    const steps = [{
      transformStepMethod: 'jsonToTableFields',
      mapOfPropertiesToFields: [
        { recordPath: 'source_payload.line', fieldName: 'line', type: 'varchar', length: 8 },
        { recordPath: 'source_payload.pressure', fieldName: 'pressure', type: 'float' },
      ],
    }];
    await ok(server, mq('configureTopic', token, { topic, transformSteps: steps }));
    await backfillDone(topic);
    const described = await ok(server, db('describeTables', token, { tableNames: [table] }));
    const names = described.data[0].fields.map((f: any) => f.name);
    assert.ok(!names.includes('temperature') && !names.includes('ok'), names.join());
    assert.deepEqual(names.slice(-2), ['line', 'pressure']);
    const query = await call('POST', `${server.http}/engine/api/v1/query/${database()}/${table}/by_temperature?top=10`, {
      body: { find: { temperature: { operator: '>=', value: 0 } } },
    });
    assert.notEqual(query.status, 200, 'the removed field\'s index is gone');
    const messages = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.deepEqual(messages[0].transformFields, { line: 'L1', pressure: 1.5 }, 'the earlier message was back-filled');

    // None left: the table has its built-in columns only, and the answer says so.
    const cleared = await ok(server, mq('configureTopic', token, { topic, transformSteps: [] }));
    assert.deepEqual(cleared.transformSteps, []);
    const after = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.equal(after[0].transformFields, undefined);
  });

  it('back-fills 100,000 messages while an MQTT publisher runs, and loses none', async function () {
    const topic = unique('plant/backfill');
    const total = 100_000;
    for (let from = 0; from < total; from += 10_000) {
      const messages = [];
      for (let i = from; i < from + 10_000; i++) messages.push({ payload: JSON.stringify({ n: i }), mqttPayloadType: 'json' });
      await ok(server, mq('publishMessagesToMq', token, { topic, messages }));
    }
    const steps = [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.n', fieldName: 'n', type: 'integer', indexName: 'by_n' }] }];
    const client = await connectClient(server);
    const extra = 2_000;
    try {
      const configured = ok(server, mq('configureTopic', token, { topic, transformSteps: steps }));
      // The publisher runs while the field is declared and the earlier messages are filled in.
      const publishing = (async () => { for (let i = total; i < total + extra; i++) await publish(client, topic, JSON.stringify({ n: i }), { qos: 1 }); })();
      const answer = await configured;
      assert.equal(answer.transformBackfill.state, 'running');
      await publishing;
      const done = await backfillDone(topic);
      assert.equal(done.backfill.state, 'idle');
    } finally {
      await closeClients(client);
    }
    const table = await tableOf(topic);
    const found = await call('POST', `${server.http}/engine/api/v1/query/${database()}/${table}/by_n?top=200000`, {
      body: { find: { n: { operator: '>=', value: 0 } }, select: ['n'] },
    });
    assert.equal(found.status, 200, found.text.slice(0, 200));
    const ns: number[] = found.json._records.map((r: any) => r.n);
    assert.equal(ns.length, total + extra, 'every message has its field, in the index');
    for (let i = 0; i < ns.length; i++) assert.equal(ns[i], i);
  });

  it('fields, values, indexes and new appends work after a restart', async function () {
    const topic = unique('plant/restart');
    await ok(server, mq('configureTopic', token, { topic, transformSteps: SENSOR_STEPS }));
    await publishMqtt(topic, [{ temperature: 30, line: 'L9', status: { ok: true } }]);
    const dataDir = server.dataDir;
    await server.close({ keepData: true });
    server = await startServer({ plugins: PLUGINS, ...MQTT_PORTS, data_dir: dataDir });
    token = await login(server);
    await publishMqtt(topic, [{ temperature: 31, line: 'L9', status: { ok: false } }]);
    const messages = await topicMessages(server, token, topic, { includeTransformFields: true });
    assert.deepEqual(messages.map((m) => m.transformFields.temperature), [30, 31]);
    const table = await tableOf(topic);
    const found = await call('POST', `${server.http}/engine/api/v1/query/${database()}/${table}/by_temperature?top=10`, {
      body: { find: { temperature: { operator: '>', value: 30 } } },
    });
    assert.deepEqual(found.json._records.map((r: any) => r.temperature), [31]);
  });
});
