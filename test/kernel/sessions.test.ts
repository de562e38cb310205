import assert from 'node:assert/strict';
import { ApiSessions, type ApiSessionSettings } from '../../kernel/sessions/api-sessions';
import { ClientConnections } from '../../kernel/sessions/client-connections';
import type { EngineError } from '../../kernel/errors';
import { IdleExpiry } from '../../kernel/idle-expiry';
import { ManualClock } from '../helpers/manual-clock';

const settings = (idle = 3600): ApiSessionSettings => ({
  description: '', defaultApi: 'db', defaultDatabaseName: 'main', defaultOwnerName: 'admin', defaultBinaryFormat: 'hex',
  defaultVariantFormat: 'json', defaultNumberFormat: 'number', defaultValidateMqttPayload: true, defaultResponseOptions: {}, idleConnectionTimeoutSeconds: idle, idleCursorTimeoutSeconds: 600,
});

describe('kernel/sessions', () => {
  const limits = { maxIdleSeconds: 0, maxLifetimeSeconds: 0 };
  let clock: ManualClock;
  let expiry: IdleExpiry;
  beforeEach(() => {
    clock = new ManualClock();
    expiry = new IdleExpiry(clock);
  });
  afterEach(() => expiry.close());

  it('issues random tokens of at least 128 bits, and a different non-secret id', () => {
    const sessions = new ApiSessions(expiry, limits);
    const tokens = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const session = sessions.create('admin', settings());
      assert.notEqual(session.id, session.authToken);
      tokens.add(session.authToken);
    }
    assert.equal(tokens.size, 200);
    for (const token of tokens) assert.ok(Buffer.from(token, 'base64url').length * 8 >= 128);
    sessions.close();
  });

  it('finds live sessions, expires idle ones on the engine clock and rejects unknown tokens', () => {
    const sessions = new ApiSessions(expiry, limits);
    const live = sessions.create('admin', settings());
    const idle = sessions.create('bob', settings(1));
    assert.equal(sessions.use(live.authToken).account, 'admin');
    clock.advanceSeconds(1);
    assert.equal(sessions.use(idle.authToken).account, 'bob', 'exactly the idle timeout is still alive');
    clock.advanceSeconds(1.5);
    assert.throws(() => sessions.use(idle.authToken), (e: EngineError) => e.code === 12031);
    assert.equal(sessions.findById(idle.id), undefined);
    assert.equal(sessions.use(live.authToken).account, 'admin');
    assert.throws(() => sessions.use('nope'), (e: EngineError) => e.code === 12031);
    assert.throws(() => sessions.use(undefined), (e: EngineError) => e.code === 12031);
    sessions.close();
  });

  it('sweeps idle sessions and tells listeners', () => {
    const sessions = new ApiSessions(expiry, limits);
    const ended: string[] = [];
    sessions.onEnd((s) => ended.push(s.account));
    sessions.create('a', settings(1));
    sessions.create('b', settings(1000));
    clock.advanceSeconds(5);
    expiry.sweep();
    assert.deepEqual(ended, ['a']);
    sessions.create('b', settings());
    sessions.endAccount('b');
    assert.deepEqual(ended, ['a', 'b', 'b']);
    assert.equal(sessions.list().length, 0);
    sessions.close();
  });

  it('caps the idle timeout and ends a session at its lifetime however often it is used', () => {
    const sessions = new ApiSessions(expiry, { maxIdleSeconds: 60, maxLifetimeSeconds: 100 });
    const session = sessions.create('a', settings(3600));
    assert.equal(session.settings.idleConnectionTimeoutSeconds, 60);
    sessions.alter(session, settings(7200));
    assert.equal(session.settings.idleConnectionTimeoutSeconds, 60);
    for (let i = 0; i < 10; i++) {
      clock.advanceSeconds(10);
      sessions.use(session.authToken);
    }
    clock.advanceSeconds(1);
    assert.throws(() => sessions.use(session.authToken), (e: EngineError) => e.code === 12031);
    sessions.close();
  });

  it('keeps one live connection per client name: the next holder tells the previous one to go', () => {
    const clients = new ClientConnections();
    const events: string[] = [];
    const first = { takeOver: () => events.push('first taken over'), disconnect: () => events.push('first disconnected'), useAnotherServer: () => events.push('first fenced') };
    const second = { takeOver: () => events.push('second taken over'), disconnect: () => events.push('second disconnected'), useAnotherServer: () => events.push('second fenced') };
    clients.attach('c1', first);
    clients.attach('c1', second);
    assert.deepEqual(events, ['first taken over']);
    clients.detach('c1', first);
    assert.equal(clients.holder('c1'), second, 'a detach by a connection no longer holding the name changes nothing');
    clients.detach('c1', second);
    assert.equal(clients.holder('c1'), undefined);
  });
});
