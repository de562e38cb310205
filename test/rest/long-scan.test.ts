/**
 * A query that visits far more rows than it returns (a filter matching nothing) lets the server
 * answer others meanwhile: the broker shares this event loop, so a long scan must not stall it.
 */
import assert from 'node:assert/strict';
import type { StoragePort } from '../../kernel/storage/storage-port';
import { call, type TestServer } from '../helpers/server';
import { ok, restClient, startRestServer, type RestClient } from './rest-client';

const ROWS = 50_000;

describe('REST: long scans', () => {
  let server: TestServer;
  let rest: RestClient;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
    ok(await rest.post('/table/main/readings', { fields: [{ name: 'n', type: 'integer' }, { name: 'kind', type: 'varchar', length: 8 }] }));
    ok(await rest.post('/index/main/readings/by_n', { fields: [{ name: 'n' }] }));
    for (let start = 0; start < ROWS; start += 1000) {
      ok(await rest.post('/record/main/readings', Array.from({ length: 1000 }, (_, i) => ({ n: start + i, kind: 'plain' }))));
    }
  });

  after(() => server.close());

  it('answers another request while a filter walks every row', async () => {
    const storage = server.engine.need('storage') as StoragePort;
    const readRecords = storage.readRecords.bind(storage);
    let scanStarted!: () => void;
    const started = new Promise<void>((resolve) => { scanStarted = resolve; });
    storage.readRecords = (...args) => {
      scanStarted();
      return readRecords(...args);
    };
    const finished: string[] = [];
    try {
      const query = rest.post('/query/main/readings/by_n?top=10', { find: { n: { operator: '>=', value: 0 } }, filter: "kind == 'rare'" })
        .then((result) => { finished.push('query'); return result; });
      // This process is the client too: the health check can go out only when the scan lets the loop run.
      await started;
      const health = call('GET', `${server.http}/`).then((result) => { finished.push('health'); return result; });
      const [found, answered] = await Promise.all([query, health]);
      assert.deepEqual(ok(found)._records, []);
      assert.equal(answered.status, 200);
    } finally {
      storage.readRecords = readRecords;
    }
    assert.deepEqual(finished, ['health', 'query']);
  });

  it('finds what a filter matches far into the scan, with skip and top', async () => {
    ok(await rest.patch(`/record/main/readings/${ROWS - 5}`, { kind: 'rare' }));
    ok(await rest.patch(`/record/main/readings/${ROWS - 2}`, { kind: 'rare' }));
    const all = ok(await rest.post('/query/main/readings/by_n?top=10', { find: { n: { operator: '>=', value: 0 } }, filter: "kind == 'rare'" }));
    assert.deepEqual(all._records.map((r: { n: number }) => r.n), [ROWS - 6, ROWS - 3]);
    const second = ok(await rest.post('/query/main/readings/by_n?top=10&skip=1', { find: { n: { operator: '>=', value: 0 } }, filter: "kind == 'rare'" }));
    assert.deepEqual(second._records.map((r: { n: number }) => r.n), [ROWS - 3]);
    const reversed = ok(await rest.post('/query/main/readings/by_n?top=1', { find: { n: { operator: '>=', value: 0 } }, filter: "kind == 'rare'", reverse: true }));
    assert.deepEqual(reversed._records.map((r: { n: number }) => r.n), [ROWS - 3]);
  });
});
