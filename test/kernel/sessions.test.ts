import assert from 'node:assert/strict';
import { ApiSessions, type ApiSessionSettings } from '../../kernel/sessions/api-sessions';
import { ClientSessions } from '../../kernel/sessions/client-sessions';
import type { EngineError } from '../../kernel/errors';

const settings = (idle = 3600): ApiSessionSettings => ({
  description: '', defaultApi: 'db', defaultDatabaseName: 'main', defaultOwnerName: 'admin', defaultBinaryFormat: 'hex',
  defaultVariantFormat: 'json', defaultNumberFormat: 'number', defaultResponseOptions: {}, idleConnectionTimeoutSeconds: idle, idleCursorTimeoutSeconds: 600,
});

describe('kernel/sessions', () => {
  it('issues random tokens of at least 128 bits', () => {
    const sessions = new ApiSessions();
    const tokens = new Set<string>();
    for (let i = 0; i < 200; i++) tokens.add(sessions.create('admin', settings()).authToken);
    assert.equal(tokens.size, 200);
    for (const token of tokens) assert.ok(Buffer.from(token, 'base64url').length * 8 >= 128);
    sessions.close();
  });

  it('finds live sessions, expires idle ones and rejects unknown tokens', () => {
    const sessions = new ApiSessions();
    const live = sessions.create('admin', settings());
    assert.equal(sessions.use(live.authToken).account, 'admin');
    const idle = sessions.create('bob', settings(1));
    idle.lastUsedAt = new Date(Date.now() - 1500);
    assert.throws(() => sessions.use(idle.authToken), (e: EngineError) => e.code === 12031);
    assert.throws(() => sessions.use('nope'), (e: EngineError) => e.code === 12031);
    assert.throws(() => sessions.use(undefined), (e: EngineError) => e.code === 12031);
    sessions.close();
  });

  it('sweeps idle sessions and tells listeners', () => {
    const sessions = new ApiSessions();
    const ended: string[] = [];
    sessions.onEnd((s) => ended.push(s.account));
    const a = sessions.create('a', settings(1));
    sessions.create('b', settings(1000));
    a.lastUsedAt = new Date(Date.now() - 5000);
    sessions.sweep();
    assert.deepEqual(ended, ['a']);
    sessions.create('b', settings());
    sessions.endAccount('b');
    assert.deepEqual(ended, ['a', 'b', 'b']);
    assert.equal(sessions.list().length, 0);
    sessions.close();
  });

  it('keeps one live connection per client name and persists client sessions', async () => {
    const map = new Map();
    const store = { get: (k: string) => map.get(k), put: async (k: string, v: unknown) => { map.set(k, v); }, remove: async (k: string) => map.delete(k), entries: () => map.entries() };
    const clients = new ClientSessions();
    clients.open(store);
    assert.throws(() => clients.require('c1'), (e: EngineError) => e.code === 14237);
    const record = await clients.create('c1', 'admin', 'mqtt');
    record.subscriptions.push({ topicFilter: 'a/#', qos: 1 });
    await clients.save(record);
    const reopened = new ClientSessions();
    reopened.open(store);
    assert.deepEqual(reopened.require('c1').subscriptions, [{ topicFilter: 'a/#', qos: 1 }]);

    const events: string[] = [];
    const first = { takeOver: () => events.push('first taken over') };
    const second = { takeOver: () => events.push('second taken over') };
    clients.attach('c1', first);
    clients.attach('c1', second);
    assert.deepEqual(events, ['first taken over']);
    clients.detach('c1', first);
    assert.ok(clients.isConnected('c1'));
    await clients.delete('c1');
    assert.deepEqual(events, ['first taken over', 'second taken over']);
    assert.ok(!clients.isConnected('c1'));
    assert.equal(map.size, 0);
  });
});
