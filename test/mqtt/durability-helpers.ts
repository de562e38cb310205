/**
 * The durability tests' server process (mqtt 13, 13b): `node dist/main.js` with the broker and
 * REST, and the numbers a topic's integration table holds after a restart (read over REST).
 */
import assert from 'node:assert/strict';
import { call } from '../helpers/server';
import { spawnEngine, type EngineProcess } from '../helpers/engine-process';
import { integrationTableName } from './session-helpers';

export interface Running {
  proc: EngineProcess;
  http: string;
  mqttPort: number;
}

/** Starts the server process and resolves once both its HTTP and MQTT listening lines are out. */
export async function startProcess(dataDir: string): Promise<Running> {
  const proc = spawnEngine({
    ENGINE_DATA_DIR: dataDir,
    ENGINE_PLUGINS: JSON.stringify(['storage-lmdb', 'data', 'http', 'rest', 'messaging', 'mqtt']),
    ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off',
  });
  const lines = await new Promise<{ http: string; mqtt: string }>((resolve, reject) => {
    const check = (): void => {
      const listening = proc.logs().filter((line) => line.msg === 'listening');
      const http = listening.find((line) => typeof line.http === 'string')?.http as string | undefined;
      const mqttUrl = listening.find((line) => line.plugin === 'mqtt')?.mqtt as string | undefined;
      if (http && mqttUrl) {
        proc.child.stdout!.off('data', check);
        resolve({ http, mqtt: mqttUrl });
      }
    };
    proc.child.stdout!.on('data', check);
    void proc.exit.then((code) => reject(new Error(`the server exited (${code}) before listening: ${proc.output()}`)));
    check();
  });
  return { proc, http: lines.http, mqttPort: Number(new URL(lines.mqtt).port) };
}

/** A stored JSON payload (REST renders json variants as their value) as the number published. */
export function publishedNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(JSON.parse(value));
  if (value && typeof value === 'object' && 'value' in value) return publishedNumber((value as { value: unknown }).value);
  throw new Error(`unexpected stored payload ${JSON.stringify(value)}`);
}

export async function storedNumbers(http: string, topic: string): Promise<Array<{ id: number; n: number }>> {
  const table = integrationTableName(topic);
  const listed = await call('GET', `${http}/engine/api/v1/table/main`);
  assert.equal(listed.status, 200, listed.text);
  assert.ok(listed.json._tables.includes(table), `${table} in ${listed.text}`);
  const found = await call('POST', `${http}/engine/api/v1/query/main/${table}/create_ts_idx?top=1000000`, {
    body: { find: { create_ts: { operator: '>=', value: '2000-01-01T00:00:00.000' } } },
  });
  assert.equal(found.status, 200, found.text);
  return (found.json._records as Array<{ _id: number; source_payload: unknown }>)
    .map((record) => ({ id: record._id, n: publishedNumber(record.source_payload) }))
    .sort((a, b) => a.id - b.id);
}
