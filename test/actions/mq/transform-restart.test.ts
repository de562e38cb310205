/**
 * Transform fields across a real restart (the engine as a child process, docs/storage.md
 * "Transform fields"): the process is killed (SIGKILL) while the back-fill of 60,000 messages
 * runs; started again on the same folder, the back-fill goes on from where its last commit left
 * it, and every message ends up with its field, in its index.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { call, tempDataDir } from '../../helpers/server';
import { spawnEngine, type EngineProcess } from '../../helpers/engine-process';

const PLUGINS = ['storage-lmdb', 'data', 'http', 'rest', 'messaging', 'actions'];

async function start(dataDir: string): Promise<{ proc: EngineProcess; http: string }> {
  const proc = spawnEngine({
    ENGINE_DATA_DIR: dataDir, ENGINE_PLUGINS: JSON.stringify(PLUGINS),
    ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: 'off', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off',
  });
  const line = await proc.listening;
  return { proc, http: line.http! };
}

async function action(http: string, envelope: Record<string, unknown>): Promise<any> {
  const response = await call('POST', `${http}/api`, { body: envelope, auth: null });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.json.errorCode, 0, `${String(envelope.action)}: ${response.json.errorMessage}`);
  return response.json.result;
}

async function login(http: string): Promise<string> {
  return (await action(http, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } })).authToken;
}

describe('transform fields: a back-fill cut by SIGKILL goes on after the restart', function () {
  this.timeout(300_000);
  const dataDir = tempDataDir('transform-restart');
  let running: EngineProcess | undefined;

  after(async function () {
    await running?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every message of the topic gets its field, none twice, after a kill during the back-fill', async function () {
    const topic = 'plant/restart/backfill';
    const total = 60_000;
    let { proc, http } = await start(dataDir);
    running = proc;
    let token = await login(http);
    for (let from = 0; from < total; from += 10_000) {
      const messages = [];
      for (let i = from; i < from + 10_000; i++) messages.push({ payload: JSON.stringify({ n: i }) });
      await action(http, { api: 'mq', action: 'publishMessagesToMq', authToken: token, params: { topic, messages } });
    }
    const steps = [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [{ recordPath: 'source_payload.n', fieldName: 'n', type: 'integer', indexName: 'by_n' }] }];
    const configured = await action(http, { api: 'mq', action: 'configureTopic', authToken: token, params: { topic, transformSteps: steps } });
    assert.equal(configured.transformBackfill.state, 'running');
    await proc.stop('SIGKILL');

    ({ proc, http } = await start(dataDir));
    running = proc;
    token = await login(http);
    // Published after the restart: computed at append.
    await action(http, { api: 'mq', action: 'publishMessagesToMq', authToken: token, params: { topic, messages: [{ payload: JSON.stringify({ n: total }) }] } });
    let described;
    do {
      described = (await action(http, { api: 'mq', action: 'describeTopics', authToken: token, params: { topics: [topic] } })).topics[0];
    } while (described.transform.backfill.state !== 'idle');
    assert.deepEqual(described.transform.fields.map((f: any) => f.fieldName), ['n']);

    const found = await call('POST', `${http}/engine/api/v1/query/main/${described.tableName}/by_n?top=100000`, {
      body: { find: { n: { operator: '>=', value: 0 } }, select: ['n'] },
    });
    assert.equal(found.status, 200, found.text.slice(0, 200));
    const ns: number[] = found.json._records.map((r: any) => r.n);
    assert.equal(ns.length, total + 1, 'each message once in the index');
    for (let i = 0; i < ns.length; i++) assert.equal(ns[i], i);
  });
});
