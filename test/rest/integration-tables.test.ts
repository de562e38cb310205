/**
 * Integration tables through REST: views over the message log, listed and read like any table,
 * never written (docs/storage.md, "Integration tables").
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import type { MessageInput } from '../../kernel/storage/storage-port';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

function message(i: number): MessageInput {
  return {
    createTs: `2024-01-01T00:00:${String(10 + i).padStart(2, '0')}.000`, payload: { type: 'json', value: JSON.stringify({ i }) },
    qos: 1, retain: false, contentType: null, correlationData: null, responseTopic: null, expirySeconds: null,
    userProperties: null, payloadFormat: null, publisher: 'rest-test',
  };
}

describe('REST integration tables (views over the message log)', () => {
  let server: TestServer;
  let rest: RestClient;
  let table: string;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
    const log = server.engine.need('storage').messageLog;
    await log.append([0, 1, 2, 3, 4].map((i) => ({ topic: i === 2 ? 'other/topic' : 'Plant/Line 1', message: message(i) })));
    table = log.getTopic('Plant/Line 1')!.table;
  });
  after(() => server.close());

  it('lists the topics\' tables with the others', async () => {
    ok(await rest.post('/table/main/plain', { fields: [{ name: 'a', type: 'integer' }] }));
    assert.equal(table, 'mqtt_msg_plant_line_1');
    assert.deepEqual(ok(await rest.get('/table/main'))._tables, ['mqtt_msg_other_topic', table, 'plain']);
  });

  it('reads a message by id (its log sequence) and through create_ts_idx', async () => {
    const record = ok(await rest.get(`/record/main/${table}/4`));
    assert.equal(record.mqtt_publisher, 'rest-test');
    assert.equal(record.mqtt_qos, 1);
    fails(await rest.get(`/record/main/${table}/3`), 404, 101);
    const found = ok(await rest.post(`/query/main/${table}/create_ts_idx?top=10`, {
      find: { create_ts: { operator: '>=', value: '2024-01-01T00:00:11.000' } },
    }));
    assert.deepEqual(found._records.map((r: { _id: number }) => r._id), [2, 4, 5]);
    const before = ok(await rest.post(`/query/main/${table}/create_ts_idx?top=10`, {
      find: { create_ts: { operator: '<', value: '2024-01-01T00:00:14.000' } },
    }));
    assert.deepEqual(before._records.map((r: { _id: number }) => r._id), [1, 2, 4]);
  });

  it('refuses writes and new indexes', async () => {
    fails(await rest.post(`/record/main/${table}`, { mqtt_qos: 0 }), 400, 4025);
    fails(await rest.del(`/record/main/${table}/1`), 400, 4025);
    fails(await rest.patch(`/record/main/${table}/1`, { mqtt_qos: 0 }), 400, 4025);
    fails(await rest.post(`/index/main/${table}/by_qos`, { fields: [{ name: 'mqtt_qos' }] }), 400, 4052, /integration table/);
    assert.equal(ok(await rest.get(`/record/main/${table}/1`)).mqtt_qos, 1);
  });

  it('deleting the table deletes the topic and its messages', async () => {
    ok(await rest.del(`/table/main/${table}`));
    const log = server.engine.need('storage').messageLog;
    assert.equal(log.getTopic('Plant/Line 1'), undefined);
    assert.deepEqual(log.readFrom(0, 10).map((m) => m.topic), ['other/topic']);
    fails(await rest.get(`/record/main/${table}/1`), 404, 4023);
  });
});
