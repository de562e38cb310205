import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, tempDataDir } from '../helpers/server';
import type { EngineError } from '../../kernel/errors';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('kernel/engine with storage', () => {
  it('persists accounts, roles and a changed admin password in LMDB across restarts', async () => {
    const dataDir = tempDataDir();
    const first = await startServer({ plugins: ['storage-lmdb', 'data'], data_dir: dataDir, listening_http_port: null, listening_https_port: null });
    assert.ok(first.engine.accounts.adminHasDefaultPassword);
    await first.engine.roles.create({ name: 'writers', grants: [{ commands: ['record.insert'], resources: ['table:main/*'] }] });
    await first.engine.accounts.create('Carol', 'carol-Secret-1', ['writers']);
    await first.engine.accounts.changePassword('admin', 'admin-Secret-2');
    await first.close({ keepData: true });

    for (const file of filesUnder(dataDir)) {
      const bytes = readFileSync(file);
      assert.ok(!bytes.includes('carol-Secret-1') && !bytes.includes('admin-Secret-2'), `${file} holds a plain-text password`);
    }

    const second = await startServer({ plugins: ['storage-lmdb', 'data'], data_dir: dataDir, listening_http_port: null, listening_https_port: null });
    try {
      assert.ok(!second.engine.accounts.adminHasDefaultPassword);
      await assert.rejects(second.engine.accounts.verifyCredentials('admin', 'ADMIN'), (e: EngineError) => e.code === 12033);
      assert.equal((await second.engine.accounts.verifyCredentials('admin', 'admin-Secret-2')).account, 'admin');
      const carol = await second.engine.accounts.verifyCredentials('CAROL', 'carol-Secret-1');
      assert.deepEqual(carol.roles, ['writers']);
      assert.equal(second.engine.roles.require('writers').origin, 'stored');
    } finally {
      await second.close();
    }
  });

  it('declares roles from the settings file as fixed roles', async () => {
    const server = await startServer({
      plugins: [], listening_http_port: null, listening_https_port: null,
      roles: [{ name: 'NoSub', grants: [{ commands: ['mq.*'], resources: ['topic:#'] }], denies: [{ commands: ['mq.subscribe'], resources: ['topic:test/nosubscribe'] }] }],
    });
    try {
      const role = server.engine.roles.require('nosub');
      assert.equal(role.origin, 'settings');
      await assert.rejects(server.engine.roles.delete('nosub'), (e: EngineError) => e.id === 'ROLE_READ_ONLY');
      await server.engine.accounts.create('sub', 'pw', ['nosub']);
      const ctx = { principal: server.engine.accounts.principal('sub'), origin: 'internal' };
      assert.throws(() => server.engine.authorize(ctx, 'mq.subscribe', { kind: 'topic', topic: 'test/nosubscribe' }), (e: EngineError) => e.code === 12030);
      server.engine.authorize(ctx, 'mq.subscribe', { kind: 'topic', topic: 'test/other' });
    } finally {
      await server.close();
    }
  });
});
