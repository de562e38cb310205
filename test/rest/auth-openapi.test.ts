import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { call, startServer, type TestServer } from '../helpers/server';
import { PREFIX, fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

/** Loads an ES module from CommonJS (the validator ships as ESM only). */
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<any>;

describe('REST authentication, roles, HTTPS, OpenAPI', () => {
  let server: TestServer;
  let rest: RestClient;

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
    ok(await rest.post('/table/main/notes', { fields: [{ name: 'text', type: 'varchar', length: 40 }] }));
    ok(await rest.post('/index/main/notes/by_text', { fields: [{ name: 'text' }] }));
    ok(await rest.post('/record/main/notes', { text: 'hello' }));
    await server.engine.accounts.create('bob', 'pw', ['reader']);
  });
  after(() => server.close());

  describe('HTTP Basic', () => {
    it('answers 401 with WWW-Authenticate and the error body without credentials', async () => {
      const result = await rest.get('/table/main', null);
      fails(result, 401, 12033);
      assert.match(String(result.headers['www-authenticate']), /^Basic realm="engine"/);
    });

    it('answers 401 for a wrong password, an unknown account or a malformed header, on every kind of route', async () => {
      for (const auth of [['admin', 'wrong'], ['nobody', 'ADMIN'], ['', '']] as Array<[string, string]>) {
        const result = await rest.get('/table/main', auth);
        fails(result, 401, 12033);
        assert.match(String(result.headers['www-authenticate']), /^Basic/);
      }
      const garbled = await call('GET', `${rest.base}/table/main`, { auth: null, headers: { authorization: 'Bearer abc' } });
      fails(garbled, 401, 12033);
      fails(await rest.post('/record/main/notes', { text: 'x' }, null), 401);
      fails(await rest.post('/query/main/notes/by_text?top=1', '{not json', null), 401);
      fails(await rest.get('/openapi', null), 401);
      assert.equal(ok(await rest.post('/query/main/notes/by_text?top=5', { find: { text: { operator: '>=', value: '' } } }))._records.length, 1);
    });

    it('takes account names case-insensitively', async () => {
      ok(await rest.get('/table/main', ['ADMIN', 'ADMIN']));
    });

    it('re-checks credentials on a keep-alive connection after a password change or a role change', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const get = (user: string, password: string): Promise<number> => new Promise((resolve, reject) => {
        const req = httpRequest(`${rest.base}/record/main/notes/1`, {
          agent, headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
        }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
        req.on('error', reject);
        req.end();
      });
      try {
        await server.engine.accounts.create('kim', 'first', ['reader']);
        assert.equal(await get('kim', 'first'), 200);
        assert.equal(await get('kim', 'first'), 200);
        await server.engine.accounts.changePassword('kim', 'second');
        assert.equal(await get('kim', 'first'), 401);
        assert.equal(await get('kim', 'second'), 200);
        await server.engine.accounts.revokeRoles('kim', ['reader']);
        assert.equal(await get('kim', 'second'), 403);
        await server.engine.accounts.delete('kim');
        assert.equal(await get('kim', 'second'), 401);
      } finally {
        agent.destroy();
      }
    });
  });

  describe('roles', () => {
    const bob: [string, string] = ['bob', 'pw'];

    it('lets a reader read', async () => {
      assert.deepEqual(ok(await rest.get('/table/main', bob)), { _tables: ['notes'] });
      assert.deepEqual(ok(await rest.get('/record/main/notes/1', bob)), { text: 'hello' });
      assert.deepEqual(ok(await rest.get('/index/main/notes', bob)), { _indexes: ['by_text'] });
      assert.deepEqual(ok(await rest.get('/index/main/notes/by_text', bob)).unique, false);
      const found = ok(await rest.post('/query/main/notes/by_text?top=5', { find: { text: { operator: '=', value: 'hello' } } }, bob));
      assert.deepEqual(found, { _records: [{ _id: 1, text: 'hello' }] });
    });

    it('answers 403 when a reader writes, and stores nothing', async () => {
      fails(await rest.post('/table/main/bobs', { fields: [{ name: 'a', type: 'integer' }] }, bob), 403, 12030);
      fails(await rest.del('/table/main/notes', bob), 403, 12030);
      fails(await rest.post('/index/main/notes/by_x', { fields: [{ name: 'text' }] }, bob), 403, 12030);
      fails(await rest.del('/index/main/notes/by_text', bob), 403, 12030);
      fails(await rest.post('/record/main/notes', { text: 'bob was here' }, bob), 403, 12030);
      fails(await rest.put('/record/main/notes/1', { text: 'bob' }, bob), 403, 12030);
      fails(await rest.patch('/record/main/notes/1', { text: 'bob' }, bob), 403, 12030);
      fails(await rest.del('/record/main/notes/1', bob), 403, 12030);
      assert.deepEqual(ok(await rest.get('/table/main')), { _tables: ['notes'] });
      assert.deepEqual(ok(await rest.get('/record/main/notes/1')), { text: 'hello' });
      fails(await rest.get('/record/main/notes/2'), 404, 101);
    });
  });

  describe('HTTPS', () => {
    it('serves the same interface over TLS', async () => {
      assert.ok(server.https, 'the test server listens on HTTPS');
      const secure = restClient(server.https!);
      assert.deepEqual(ok(await secure.get('/table/main')), { _tables: ['notes'] });
      const [id] = ok(await secure.post('/record/main/notes', { text: 'over tls' }))._ids;
      assert.deepEqual(ok(await secure.get(`/record/main/notes/${id}`)), { text: 'over tls' });
      const found = ok(await secure.post('/query/main/notes/by_text?top=1', { find: { text: { operator: '>', value: 'hello' } } }));
      assert.deepEqual(found._records, [{ _id: id, text: 'over tls' }]);
      ok(await secure.del(`/record/main/notes/${id}`));
      fails(await secure.get('/table/main', null), 401);
    });
  });

  describe('OpenAPI', () => {
    it('serves a valid OpenAPI 3 document describing every endpoint, with Basic security', async () => {
      const document = ok(await rest.get('/openapi'));
      assert.match(document.openapi, /^3\./);
      assert.equal(document.info.title, 'engine REST');
      assert.deepEqual(document.components.securitySchemes.basicAuth, { type: 'http', scheme: 'basic' });
      assert.deepEqual(document.security, [{ basicAuth: [] }]);
      const expected: Record<string, string[]> = {
        [`${PREFIX}/table/{db}`]: ['get'],
        [`${PREFIX}/table/{db}/{table}`]: ['post', 'delete'],
        [`${PREFIX}/index/{db}/{table}/{index}`]: ['post', 'delete', 'get'],
        [`${PREFIX}/index/{db}/{table}`]: ['get'],
        [`${PREFIX}/record/{db}/{table}`]: ['post'],
        [`${PREFIX}/record/{db}/{table}/{id}`]: ['get', 'put', 'patch', 'delete'],
        [`${PREFIX}/query/{db}/{table}/{index}`]: ['post'],
        [`${PREFIX}/openapi`]: ['get'],
      };
      for (const [path, methods] of Object.entries(expected)) {
        assert.ok(document.paths[path], `path ${path} is described`);
        for (const method of methods) assert.ok(document.paths[path][method], `${method} ${path} is described`);
      }
      const query = document.paths[`${PREFIX}/query/{db}/{table}/{index}`].post;
      const top = query.parameters.find((p: { name: string; in: string }) => p.name === 'top' && p.in === 'query');
      assert.equal(top.required, true);
      assert.ok(query.requestBody.content['application/json'].schema.properties.advanced_find);

      const { Validator } = await importEsm('@seriousme/openapi-schema-validator');
      const validator = new Validator();
      const result = await validator.validate(document);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });
  });

  describe('limits and malformed requests', () => {
    it('answers 400 for malformed JSON and 404 for an unknown route', async () => {
      fails(await rest.post('/record/main/notes', '{"text": "x",}'), 400, 12009);
      const unknown = await rest.get('/nothing/here');
      assert.equal(unknown.status, 404);
    });

    it('answers 413 for a body over body_limit_bytes', async () => {
      const small = await startRestServer({ body_limit_bytes: 1024 });
      try {
        const client = restClient(small.http);
        ok(await client.post('/table/main/t', { fields: [{ name: 'v', type: 'lvarchar' }] }));
        fails(await client.post('/record/main/t', { v: 'x'.repeat(2000) }), 413, 12028);
        ok(await client.post('/record/main/t', { v: 'x'.repeat(100) }));
      } finally {
        await small.close();
      }
    });
  });
});

describe('REST without a storage plugin', () => {
  it('still serves its description and answers 503 for data requests', async () => {
    const server = await startServer({ plugins: ['http', 'data', 'rest'] });
    try {
      const rest = restClient(server.http);
      fails(await rest.get('/table/main'), 503, 12006);
      assert.match(ok(await rest.get('/openapi')).openapi, /^3\./);
    } finally {
      await server.close();
    }
  });
});

describe('REST persistence across a restart', () => {
  it('keeps tables, indexes and records when the server starts again on the same data_dir', async () => {
    let server = await startRestServer();
    const dataDir = server.dataDir;
    try {
      let rest = restClient(server.http);
      ok(await rest.post('/table/main/kept', { fields: [{ name: 'name', type: 'varchar', length: 10 }, { name: 'at', type: 'timestamp' }] }));
      ok(await rest.post('/index/main/kept/by_name', { fields: [{ name: 'name', ascending: false }], unique: true }));
      assert.deepEqual(ok(await rest.post('/record/main/kept', [{ name: 'a', at: '01/02/2023 3:04:05.006' }, { name: 'b' }])), { _ids: [1, 2] });
      ok(await rest.patch('/record/main/kept/2', { at: '12/31/2024 23:59:59.999' }));
      await server.close({ keepData: true });

      server = await startRestServer({ data_dir: dataDir });
      rest = restClient(server.http);
      assert.deepEqual(ok(await rest.get('/table/main')), { _tables: ['kept'] });
      assert.deepEqual(ok(await rest.get('/index/main/kept')), { _indexes: ['by_name'] });
      assert.deepEqual(ok(await rest.get('/index/main/kept/by_name')), { unique: true, fields: [{ name: 'name', ascending: false }] });
      assert.deepEqual(ok(await rest.get('/record/main/kept/1')), { name: 'a', at: '01/02/2023 03:04:05.006' });
      const found = ok(await rest.post('/query/main/kept/by_name?top=10', { find: { name: { operator: '>=', value: 'a' } } }));
      assert.deepEqual(found._records, [
        { _id: 2, name: 'b', at: '12/31/2024 23:59:59.999' },
        { _id: 1, name: 'a', at: '01/02/2023 03:04:05.006' },
      ]);
      assert.deepEqual(ok(await rest.post('/record/main/kept', { name: 'c' })), { _ids: [3] });
      fails(await rest.post('/record/main/kept', { name: 'a' }), 400, 2);
    } finally {
      await server.close();
    }
  });
});
