/**
 * What the catalog keeps across a restart, through REST on one data folder: a table created after
 * a restart is a new, empty table (it once reopened the sub-database of an existing one, because
 * the counter naming sub-databases was not read back), and existing tables keep their rows.
 */
import assert from 'node:assert/strict';
import { tempDataDir } from '../helpers/server';
import { ok, restClient, startRestServer } from './rest-client';

describe('REST across a restart', () => {
  it('a table or index created after a restart never shares storage with an existing one', async () => {
    const dataDir = tempDataDir('engine-restart');
    const first = await startRestServer({ data_dir: dataDir });
    try {
      const rest = restClient(first.http);
      ok(await rest.post('/table/main/before', { fields: [{ name: 'x', type: 'integer' }] }));
      ok(await rest.post('/index/main/before/by_x', { fields: [{ name: 'x' }] }));
      ok(await rest.post('/record/main/before', [{ x: 1 }, { x: 2 }]));
    } finally {
      await first.close({ keepData: true });
    }
    for (let restart = 0; restart < 2; restart++) {
      const server = await startRestServer({ data_dir: dataDir });
      try {
        const rest = restClient(server.http);
        const name = `after${restart}`;
        ok(await rest.post(`/table/main/${name}`, { fields: [{ name: 'x', type: 'integer' }] }));
        ok(await rest.post(`/index/main/${name}/by_x`, { fields: [{ name: 'x' }] }));
        const fresh = ok(await rest.post(`/query/main/${name}/by_x?top=10`, { find: { x: { operator: '>=', value: 0 } } }));
        assert.deepEqual(fresh._records, [], `${name} starts empty`);
        ok(await rest.post(`/record/main/${name}`, { x: 100 + restart }));
        const kept = ok(await rest.post('/query/main/before/by_x?top=10', { find: { x: { operator: '>=', value: 0 } } }));
        assert.deepEqual(kept._records.map((r: { x: number }) => r.x), [1, 2], 'the first table keeps its rows, and only them');
      } finally {
        await server.close({ keepData: restart === 0 });
      }
    }
  });
});
