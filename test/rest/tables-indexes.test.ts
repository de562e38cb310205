import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

describe('REST tables and indexes', () => {
  let server: TestServer;
  let rest: RestClient;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
  });
  after(() => server.close());

  describe('tables', () => {
    it('lists no tables in a fresh default database', async () => {
      assert.deepEqual(ok(await rest.get('/table/main')), { _tables: [] });
    });

    it('creates a table (types case-insensitive) and lists it', async () => {
      const body = { fields: [{ name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 }, { name: 'note', type: 'lvarchar' }] };
      assert.deepEqual(ok(await rest.post('/table/main/people', body)), {});
      assert.deepEqual(ok(await rest.get('/table/main'))._tables, ['people']);
    });

    it('refuses a table that exists with 400', async () => {
      fails(await rest.post('/table/main/people', { fields: [{ name: 'a', type: 'integer' }] }), 400, 4022);
    });

    it('refuses bad definitions with 400', async () => {
      fails(await rest.post('/table/main/bad', { fields: [{ name: 'a', type: 'nosuchtype' }] }), 400);
      fails(await rest.post('/table/main/bad', {}), 400, 12025, /fields/);
      fails(await rest.post('/table/main/bad', { fields: [] }), 400);
      fails(await rest.post('/table/main/bad', { fields: [{ type: 'integer' }] }), 400);
      fails(await rest.post('/table/main/bad', { fields: 'name' }), 400);
      fails(await rest.post('/table/main/bad', '{"fields": ['), 400, 12009);
      assert.deepEqual(ok(await rest.get('/table/main'))._tables, ['people']);
    });

    it('answers 404 for an unknown database', async () => {
      fails(await rest.get('/table/nodb'), 404, 4094);
      fails(await rest.post('/table/nodb/t', { fields: [{ name: 'a', type: 'integer' }] }), 404, 4094);
      fails(await rest.del('/table/nodb/t'), 404, 4094);
    });

    it('deletes a table and its data', async () => {
      ok(await rest.post('/table/main/scratch', { fields: [{ name: 'a', type: 'integer' }] }));
      assert.deepEqual(ok(await rest.post('/record/main/scratch', { a: 1 })), { _ids: [1] });
      assert.deepEqual(ok(await rest.del('/table/main/scratch')), {});
      assert.ok(!ok(await rest.get('/table/main'))._tables.includes('scratch'));
      fails(await rest.del('/table/main/scratch'), 404, 4023);
      fails(await rest.get('/record/main/scratch/1'), 404, 4023);
      ok(await rest.post('/table/main/scratch', { fields: [{ name: 'a', type: 'integer' }] }));
      fails(await rest.get('/record/main/scratch/1'), 404, 101);
      ok(await rest.del('/table/main/scratch'));
    });
  });

  describe('indexes', () => {
    before(async () => {
      ok(await rest.post('/table/main/items', {
        fields: [
          { name: 'name', type: 'varchar', length: 20 },
          { name: 'qty', type: 'integer' },
          { name: 'doc', type: 'json' },
        ],
      }));
    });

    it('creates an index and reads its definition', async () => {
      assert.deepEqual(ok(await rest.post('/index/main/items/by_name', { fields: [{ name: 'name' }] })), {});
      assert.deepEqual(ok(await rest.get('/index/main/items/by_name')), { unique: false, fields: [{ name: 'name', ascending: true }] });
      ok(await rest.post('/index/main/items/by_qty', { fields: [{ name: 'qty', ascending: false }, { name: 'name', ascending: true }], unique: true }));
      assert.deepEqual(ok(await rest.get('/index/main/items/by_qty')), {
        unique: true, fields: [{ name: 'qty', ascending: false }, { name: 'name', ascending: true }],
      });
    });

    it('creates an index on a JSON property (key, type, size) and reads it back', async () => {
      ok(await rest.post('/index/main/items/by_city', { fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 16 }] }));
      assert.deepEqual(ok(await rest.get('/index/main/items/by_city')), {
        unique: false, fields: [{ name: 'doc', ascending: true, key: 'city', type: 'varchar', size: 16 }],
      });
    });

    it('lists indexes without the automatic record-ID index', async () => {
      const names = ok(await rest.get('/index/main/items'))._indexes as string[];
      assert.deepEqual([...names].sort(), ['by_city', 'by_name', 'by_qty']);
    });

    it('refuses an index that exists, an index on a missing column, and bad bodies with 400', async () => {
      fails(await rest.post('/index/main/items/by_name', { fields: [{ name: 'qty' }] }), 400, 4051);
      fails(await rest.post('/index/main/items/by_ghost', { fields: [{ name: 'ghost' }] }), 400);
      fails(await rest.post('/index/main/items/by_x', { fields: [] }), 400);
      fails(await rest.post('/index/main/items/by_x', {}), 400, 12025);
      fails(await rest.post('/index/main/items/by_x', { fields: [{ name: 'qty', ascending: 'yes' }] }), 400);
      fails(await rest.post('/index/main/items/by_x', { fields: [{ name: 'qty' }], unique: 'no' }), 400);
      fails(await rest.get('/index/main/items/by_ghost'), 404, 4045);
      assert.equal((ok(await rest.get('/index/main/items'))._indexes as string[]).length, 3);
    });

    it('answers 404 for a missing table or database', async () => {
      fails(await rest.post('/index/main/nothing/i', { fields: [{ name: 'a' }] }), 404, 4023);
      fails(await rest.get('/index/main/nothing'), 404, 4023);
      fails(await rest.get('/index/nodb/items'), 404, 4094);
      fails(await rest.get('/index/main/nothing/i'), 404, 4023);
    });

    it('deletes an index; deleting a missing one is 404', async () => {
      assert.deepEqual(ok(await rest.del('/index/main/items/by_name')), {});
      fails(await rest.get('/index/main/items/by_name'), 404, 4045);
      fails(await rest.del('/index/main/items/by_name'), 404, 4045);
      assert.ok(!(ok(await rest.get('/index/main/items'))._indexes as string[]).includes('by_name'));
    });
  });
});
