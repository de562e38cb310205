import assert from 'node:assert/strict';
import { Accounts } from '../../kernel/auth/accounts';
import { RoleCatalog } from '../../kernel/auth/roles';
import { hashPasswordSync, verifyPasswordSync } from '../../kernel/auth/password-hash';
import { PasswordHasher } from '../../kernel/auth/password-hasher';
import type { EngineError } from '../../kernel/errors';
import type { InternalStore } from '../../kernel/storage/storage-port';

function memory<V = any>(): InternalStore<V> & { map: Map<string, V> } {
  const map = new Map<string, V>();
  return { map, get: (k) => map.get(k), put: async (k, v) => { map.set(k, v); }, remove: async (k) => map.delete(k), entries: () => map.entries() };
}

describe('kernel/auth/accounts', () => {
  const hasher = new PasswordHasher(1);
  after(() => hasher.close());

  it('hashes with salted scrypt and verifies', async () => {
    const a = hashPasswordSync('secret');
    const b = await hasher.hash('secret');
    assert.notEqual(a, b);
    assert.match(a, /^scrypt\$16384\$8\$1\$/);
    assert.ok(!a.includes('secret'));
    assert.ok(verifyPasswordSync('secret', a));
    assert.ok(await hasher.verify('secret', b));
    assert.ok(!(await hasher.verify('Secret', a)));
    assert.ok(!(await hasher.verify('secret', 'garbage')));
  });

  it('refuses a check at once (503) when too many are already waiting, and serves the rest', async () => {
    const small = new PasswordHasher(1, { maxWaiting: 3 });
    try {
      const stored = await small.hash('pw');
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => small.verify('pw', stored)));
      const refused = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled' && o.value === true).length, 4, 'one running and three waiting are served');
      assert.equal(refused.length, 6);
      for (const o of refused) assert.equal(((o as PromiseRejectedResult).reason as EngineError).id, 'NOT_AVAILABLE');
    } finally {
      await small.close();
    }
  });

  it('bootstraps admin with ADMIN, or with the given password', async () => {
    const accounts = new Accounts(new RoleCatalog(), 60, hasher);
    await accounts.open(memory(), undefined);
    assert.ok(accounts.adminHasDefaultPassword);
    assert.deepEqual((await accounts.verifyCredentials('ADMIN', 'ADMIN')).roles, ['admin']);

    const other = new Accounts(new RoleCatalog(), 60, hasher);
    await other.open(memory(), 's3cret!');
    assert.ok(!other.adminHasDefaultPassword);
    await assert.rejects(other.verifyCredentials('admin', 'ADMIN'), (e: EngineError) => e.code === 12033);
    assert.equal((await other.verifyCredentials('Admin', 's3cret!')).account, 'admin');
  });

  it('keeps names case-insensitive and rejects duplicates and unknown roles', async () => {
    const accounts = new Accounts(new RoleCatalog(), 60, hasher);
    const store = memory();
    await accounts.open(store, undefined);
    await accounts.create('Bob', 'pw', ['reader']);
    assert.ok(store.map.has('bob'));
    assert.equal((await accounts.verifyCredentials('BOB', 'pw')).account, 'bob');
    await assert.rejects(accounts.create('bob', 'x'), (e: EngineError) => e.id === 'ACCOUNT_EXISTS');
    await assert.rejects(accounts.create('carl', 'x', ['nope']), (e: EngineError) => e.id === 'ROLE_NOT_FOUND');
    await assert.rejects(accounts.create('bad name!', 'x'), (e: EngineError) => e.id === 'INVALID_PARAMETER');
    await assert.rejects(accounts.create('dan', ''), (e: EngineError) => e.id === 'INVALID_PARAMETER');
  });

  it('changes passwords (cache dropped), roles, and deletes', async () => {
    const accounts = new Accounts(new RoleCatalog(), 60, hasher);
    const store = memory();
    await accounts.open(store, undefined);
    await accounts.create('eve', 'one');
    await accounts.verifyCredentials('eve', 'one');
    await accounts.changePassword('eve', 'two');
    await assert.rejects(accounts.verifyCredentials('eve', 'one'), (e: EngineError) => e.code === 12033);
    await accounts.verifyCredentials('eve', 'two');
    await accounts.assignRoles('eve', ['reader', 'admin']);
    assert.deepEqual(accounts.principal('eve').roles, ['reader', 'admin']);
    await accounts.revokeRoles('eve', ['ADMIN']);
    assert.deepEqual(accounts.principal('eve').roles, ['reader']);
    await accounts.delete('eve');
    assert.ok(!store.map.has('eve'));
    await assert.rejects(accounts.verifyCredentials('eve', 'two'), (e: EngineError) => e.code === 12033);
    await assert.rejects(accounts.delete('admin'), (e: EngineError) => e.id === 'INVALID_PARAMETER');
    await accounts.changePassword('admin', 'better');
    assert.ok(!accounts.adminHasDefaultPassword);
  });

  it('reloads stored accounts', async () => {
    const store = memory();
    const first = new Accounts(new RoleCatalog(), 60, hasher);
    await first.open(store, undefined);
    await first.create('fay', 'pw', ['reader']);
    await first.changePassword('admin', 'changed');
    const second = new Accounts(new RoleCatalog(), 60, hasher);
    await second.open(store, undefined);
    assert.ok(!second.adminHasDefaultPassword);
    assert.equal((await second.verifyCredentials('fay', 'pw')).account, 'fay');
    assert.deepEqual(second.list().map((a) => a.name).sort(), ['admin', 'fay']);
  });
});
