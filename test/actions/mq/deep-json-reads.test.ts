/**
 * A JSON payload nested deeper than any response can be written (20,000 arrays, published over
 * MQTT) leaves every read path answering: messages (getMessagesFromMqTopic, MQ API sessions,
 * listRetainedMessages), its integration table (getRecordsByTable, a filter over it, REST reads)
 * return it as its JSON text, marked (`payloadEncoding` / `valueEncoding: "jsonText"`), and JSON
 * within the limit still comes back as a value (docs/values.md, "JSON nested too deeply").
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { call, type TestServer } from '../../helpers/server';
import { MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { closeClients, connectClient, publish, unique } from '../../mqtt/pubsub-helpers';
import { startServer } from '../../helpers/server';
import { db, login, ok, post } from '../action-client';
import { mq } from './mq-client';

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** The deepest a value may nest to come back as one (MAX_JSON_DEPTH). */
const LIMIT = 512;

describe('actions mq: JSON payloads nested too deeply to return as values', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let publisher: MqttClient;
  const topic = unique('deep/t');
  const deep = nested(20_000);
  const atLimit = nested(LIMIT);
  const overLimit = nested(LIMIT + 1);
  const sessionName = unique('deep-reader');
  let table: string;

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'], ...MQTT_PORTS });
    token = await login(server);
    await ok(server, mq('createMqApiSession', token, { clientName: sessionName }));
    await ok(server, mq('subscribeToMq', token, { clientName: sessionName, subscriptionActions: [{ subscriptionAction: 'add', topicFilter: topic, qos: 1 }] }));
    publisher = await connectClient(server);
    await publish(publisher, topic, deep, { qos: 1 });
    await publish(publisher, topic, atLimit, { qos: 1 });
    await publish(publisher, topic, overLimit, { qos: 1 });
    await publish(publisher, topic, deep, { qos: 1, retain: true });
    const topics = await ok(server, mq('listTopics', token));
    table = topics.topics.find((entry: any) => entry.topic === topic).tableName;
  });
  after(async () => {
    await closeClients(publisher);
    await server?.close();
  });

  /** The four messages as the message shape returns them: text marked, or the value. */
  function assertMessagePayloads(messages: any[]): void {
    assert.equal(messages.length, 4);
    for (const i of [0, 2, 3]) {
      assert.equal(messages[i].payload, [deep, null, overLimit, deep][i]);
      assert.equal(messages[i].payloadEncoding, 'jsonText');
      assert.equal(messages[i].binaryFormat, undefined);
    }
    assert.equal(messages[1].payloadEncoding, undefined, 'JSON within the limit is a value');
    assert.equal(JSON.stringify(messages[1].payload), atLimit);
  }

  it('getMessagesFromMqTopic answers 200 with the deep payloads as their text, marked payloadEncoding "jsonText"', async () => {
    for (const binaryFormat of ['hex', 'base64', 'byteArray']) {
      const result = await ok(server, mq('getMessagesFromMqTopic', token, { topic, startFrom: 'head', binaryFormat, includeMessageMetadata: true, includeMqttProperties: true }));
      assertMessagePayloads(result.messages);
    }
  });

  it('getMessagesFromMqTopic by tableName, from the tail, answers the same', async () => {
    const result = await ok(server, mq('getMessagesFromMqTopic', token, { tableName: table, startFrom: 'tail', maxMessages: 100, binaryFormat: 'base64', includeMessageMetadata: true }));
    assertMessagePayloads(result.messages);
  });

  it('getMessagesFromMqApiSession answers the same', async () => {
    const result = await ok(server, mq('getMessagesFromMqApiSession', token, { clientName: sessionName, maxMessages: 100 }));
    assertMessagePayloads(result.messages);
  });

  it("listRetainedMessages '#' answers 200 with the retained deep payload as its text, marked", async () => {
    const result = await ok(server, mq('listRetainedMessages', token, { topicFilter: '#' }));
    const retained = result.messages.find((m: any) => m.topic === topic);
    assert.equal(retained.payload, deep);
    assert.equal(retained.payloadEncoding, 'jsonText');
    assert.equal(retained.size, deep.length);
  });

  it('getRecordsByTable returns a deep source_payload as a variant object holding its text (valueEncoding "jsonText") in the json and variantObject formats', async () => {
    for (const variantFormat of ['json', 'variantObject']) {
      const result = await ok(server, db('getRecordsByTable', token, { tableName: table, maxRecords: 10 }, { responseOptions: { dataFormat: 'objects', variantFormat } }));
      const payloads = result.data.map((record: any) => record.source_payload);
      assert.deepEqual(payloads[0], { schema: 'jsonaction.org/schemas/variantObject', type: 'json', value: deep, valueEncoding: 'jsonText' });
      assert.deepEqual(payloads[2], { schema: 'jsonaction.org/schemas/variantObject', type: 'json', value: overLimit, valueEncoding: 'jsonText' });
      const withinLimit = variantFormat === 'json' ? payloads[1] : payloads[1].value;
      assert.equal(JSON.stringify(withinLimit), atLimit);
    }
    const asText = await ok(server, db('getRecordsByTable', token, { tableName: table, maxRecords: 10 }, { responseOptions: { dataFormat: 'objects', variantFormat: 'string' } }));
    assert.equal(asText.data[0].source_payload, deep);
  });

  it('getRecordsByTable with a filter comparing the deep variant answers records, not an internal error', async () => {
    const result = await ok(server, db('getRecordsByTable', token, { tableName: table, tableFilter: 'source_payload == source_payload', maxRecords: 10 }, { responseOptions: { dataFormat: 'objects' } }));
    assert.equal(result.data.length, 4);
  });

  it('REST GET /record and POST /query answer 200 with the deep payload as a variant object holding its text', async () => {
    const base = `${server.http}/engine/api/v1`;
    const record = await call('GET', `${base}/record/main/${table}/1`);
    assert.equal(record.status, 200, record.text);
    assert.deepEqual(record.json.source_payload, { schema: 'jsonaction.org/schemas/variantObject', type: 'json', value: deep, valueEncoding: 'jsonText' });
    const query = await call('POST', `${base}/query/main/${table}/create_ts_idx?top=10`, { body: { find: { create_ts: { operator: '>=', value: '01/01/2000 00:00:00.000' } } } });
    assert.equal(query.status, 200, query.text);
    assert.equal(query.json._records.length, 4);
    assert.equal(query.json._records[0].source_payload.value, deep);
  });

  it('brackets inside JSON strings do not count as nesting: such a payload comes back as a value', async () => {
    const other = unique('deep/strings');
    const text = JSON.stringify({ s: '['.repeat(5_000), t: '{'.repeat(5_000), q: '\\"[[[' });
    await publish(publisher, other, text, { qos: 1 });
    const result = await ok(server, mq('getMessagesFromMqTopic', token, { topic: other }));
    assert.equal(result.messages[0].payloadEncoding, undefined);
    assert.deepEqual(result.messages[0].payload, JSON.parse(text));
  });

  it('/api answers HTTP 200 with an envelope for every read of the topic', async () => {
    for (const envelope of [
      mq('getMessagesFromMqTopic', token, { topic }),
      mq('listRetainedMessages', token, { topicFilter: '#' }),
      db('getRecordsByTable', token, { tableName: table }),
    ]) {
      const response = await post(server, envelope);
      assert.equal(response.status, 200, response.text.slice(0, 300));
      assert.equal(response.json.errorCode, 0, response.json.errorMessage);
    }
  });
});
