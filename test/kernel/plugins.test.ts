import assert from 'node:assert/strict';
import { join } from 'node:path';
import { definePlugin } from '../../kernel/plugin';
import { PluginError, findPlugin, orderPlugins } from '../../kernel/load-plugins';
import { call, startServer } from '../helpers/server';
import { loadSettings } from '../../kernel/settings';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'hello-plugin.js');
const noop = (name: string, dependencies: string[] = []) => definePlugin({ name, dependencies, register() {} });

describe('kernel/load-plugins', () => {
  it('finds built-in plugins by name, others by path', () => {
    assert.equal(findPlugin('http').name, 'http');
    assert.equal(findPlugin(EXAMPLE).name, 'hello');
  });

  it('names an unknown plugin', () => {
    assert.throws(() => findPlugin('no-such-plugin'), (e: Error) => e instanceof PluginError && /"no-such-plugin"/.test(e.message));
    assert.throws(() => findPlugin('./nowhere/plugin.js'), /nowhere/);
    assert.throws(() => findPlugin(__filename), /not an engine plugin/);
  });

  it('orders by dependencies and names a missing one or a cycle', () => {
    const ordered = orderPlugins([noop('rest', ['http']), noop('http', ['storage']), noop('storage')]);
    assert.deepEqual(ordered.map((p) => p.name), ['storage', 'http', 'rest']);
    assert.throws(() => orderPlugins([noop('rest', ['http'])]), /"rest" needs plugin "http"/);
    assert.throws(() => orderPlugins([noop('a', ['b']), noop('b', ['a'])]), /cycle/);
    assert.throws(() => orderPlugins([noop('a'), noop('a')]), /twice/);
  });
});

describe('kernel/engine plugins', () => {
  it('loads a third-party plugin by path: its command and route work', async () => {
    const server = await startServer({ plugins: ['http', EXAMPLE], plugin_options: { hello: { greeting: 'Hi' } } });
    try {
      assert.ok(server.engine.bus.has('hello.greet'));
      const reply = await call('GET', `${server.http}/hello?name=Ann`);
      assert.equal(reply.status, 200);
      assert.deepEqual(reply.json, { message: 'Hi, Ann (from admin)' });
      const root = await call('GET', `${server.http}/`);
      assert.deepEqual(root.json.plugins, ['http', 'hello']);
    } finally {
      await server.close();
    }
  });

  it('stops the start naming a plugin that hangs', async () => {
    const hang = definePlugin({ name: 'sleepy', register: () => new Promise<void>(() => undefined) });
    await assert.rejects(startServer({ plugins: [], plugin_timeout_ms: 200 }, { extraPlugins: [hang] }),
      (e: Error) => e instanceof PluginError && /"sleepy"/.test(e.message));
  });

  it('stops the start naming a plugin that fails, and closes what loaded', async () => {
    const closed: string[] = [];
    const good = definePlugin({ name: 'good', register(engine) { engine.onClose(() => { closed.push('good'); }); } });
    const bad = definePlugin({ name: 'bad', register() { throw new Error('broken on purpose'); } });
    await assert.rejects(startServer({ plugins: [] }, { extraPlugins: [good, bad] }), /broken on purpose/);
    assert.deepEqual(closed, ['good']);
  });

  it('closes plugins in reverse load order', async () => {
    const closed: string[] = [];
    const make = (name: string, dependencies: string[] = []) => definePlugin({ name, dependencies, register(engine) { engine.onClose(() => { closed.push(name); }); } });
    const server = await startServer({ plugins: [] }, { extraPlugins: [make('c', ['b']), make('a'), make('b', ['a'])] });
    assert.deepEqual(server.engine.plugins.map((p) => p.name), ['a', 'b', 'c']);
    await server.close();
    assert.deepEqual(closed, ['c', 'b', 'a']);
  });

  it('refuses a service provided twice and names a missing one', async () => {
    const provider = (name: string) => definePlugin({ name, register(engine) { engine.provide('thing', {}); } });
    await assert.rejects(startServer({ plugins: [] }, { extraPlugins: [provider('p1'), provider('p2')] }), /"thing" is provided twice/);
    const server = await startServer({ plugins: [] });
    try {
      assert.throws(() => server.engine.need('storage'), /service "storage"/);
    } finally {
      await server.close();
    }
  });
});

describe('one-protocol builds (config/*.json)', () => {
  const CONFIG = join(__dirname, '..', '..', '..', 'config');
  const pluginsOf = (file: string): string[] => loadSettings({ argv: ['--config', join(CONFIG, file)], env: {} }).plugins;

  it('rest-only serves REST and not the action interface', async () => {
    const server = await startServer({ plugins: pluginsOf('rest-only.json') });
    try {
      assert.deepEqual((await call('GET', `${server.http}/`)).json.plugins, ['storage-lmdb', 'data', 'http', 'rest']);
      assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`)).status, 200);
      assert.equal((await call('POST', `${server.http}/api`, { body: { action: 'pingSession', params: {} } })).status, 404);
    } finally {
      await server.close();
    }
  });

  it('mq-only serves the action interface and not REST', async () => {
    const server = await startServer({ plugins: pluginsOf('mq-only.json'), mqtt_port: 0, mqtts_port: 0, mqtt_ws_port: 0, mqtt_wss_port: 0 });
    try {
      assert.ok(!(await call('GET', `${server.http}/`)).json.plugins.includes('rest'));
      assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`)).status, 404);
      const reply = await call('POST', `${server.http}/api`, { body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      assert.equal(reply.json.errorCode, 0);
      const data = await call('POST', `${server.http}/api`, { body: { api: 'db', action: 'listTables', authToken: reply.json.authToken, params: {} } });
      assert.equal(data.json.errorCode, 12006, 'no data plugin: data actions are not available');
    } finally {
      await server.close();
    }
  });
});
