/**
 * Sessions without a connection (MQ API sessions) in the message core: one registry of client
 * names with MQTT, reads from the session's position in the log (each message once, only what its
 * subscriptions match from the time they were made), positions kept across a restart.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server';
import type { Principal } from '../../kernel/auth/principal';
import type { MessageCore, SessionRead } from '../../plugins/messaging/message-core';
import { EngineError } from '../../kernel/errors';
import { coreMessage, subscription } from './core-helpers';
import { uniqueName } from '../mqtt/session-helpers';

const ADMIN: Principal = { account: 'admin', roles: ['admin'] };
const ALICE: Principal = { account: 'alice', roles: ['admin'] };

/** The text of a message read for a session (payloads that are not JSON are stored as binary). */
function text(read: SessionRead): string {
  const payload = read.message.payload;
  return payload.type === 'binary' ? Buffer.from(payload.value).toString() : String(payload.value);
}

describe('message core: MQ API sessions', function () {
  this.timeout(60_000);
  let server: TestServer;
  let core: MessageCore;

  async function start(dataDir?: string): Promise<void> {
    server = await startServer({ plugins: ['storage-lmdb', 'messaging'], ...(dataDir ? { data_dir: dataDir } : {}) });
    core = server.engine.need('messaging');
  }

  before(() => start());
  after(() => server?.close());

  it('a name in use by another session is 14221', () => {
    const name = uniqueName('api');
    core.createApiSession(name, ADMIN);
    assert.throws(() => core.createApiSession(name, ADMIN), (error: unknown) => error instanceof EngineError && error.code === 14221);
  });

  it('reads what its subscriptions match, from its position, each message once; not what came before a subscription', async () => {
    const name = uniqueName('api');
    const topic = uniqueName('api/t');
    const session = core.createApiSession(name, ADMIN);
    await core.publishAll([coreMessage(topic, 'before')]);
    core.subscribe(session, topic, subscription(1));
    await core.publishAll([coreMessage(topic, 'one', 1), coreMessage(uniqueName('other'), 'elsewhere'), coreMessage(topic, 'two', 0)]);
    const first = core.readSession(session, 1, ADMIN);
    assert.deepEqual(first.map(text), ['one']);
    const rest = core.readSession(session, 10, ADMIN);
    assert.deepEqual(rest.map(text), ['two']);
    assert.deepEqual(core.readSession(session, 10, ADMIN), [], 'nothing twice');
  });

  it('a session forgotten while its write is awaited (another cluster node took it): whenStored settles as not written, in the next flush', async () => {
    const session = core.createApiSession(uniqueName('api'), ADMIN);
    const stored = core.state.whenStored(session);
    core.state.forget(session);
    assert.equal(await stored, false);
  });

  it('keeps its owner, subscriptions and position across a restart; deleteSession ends it once (its removal stored), and a second one finds nothing', async () => {
    const name = uniqueName('api');
    const topic = uniqueName('api/r');
    const session = core.createApiSession(name, ALICE);
    core.subscribe(session, topic, subscription(1));
    await core.publishAll([coreMessage(topic, 'a'), coreMessage(topic, 'b')]);
    assert.deepEqual(core.readSession(session, 1, ADMIN).map(text), ['a']);
    const dataDir = server.dataDir;
    await server.close({ keepData: true });
    await start(dataDir);
    const again = core.sessions.get(name);
    assert.ok(again, 'the session is back');
    assert.equal(again.kind, 'mqApi');
    assert.equal(again.owner, 'alice');
    await core.publishAll([coreMessage(topic, 'c')]);
    assert.deepEqual(core.readSession(again, 10, ADMIN).map(text), ['b', 'c']);
    // A promise of the stored removal when a session had the name; undefined when none had.
    const removal = core.deleteSession(name);
    assert.ok(removal instanceof Promise);
    await removal;
    assert.equal(core.sessions.get(name), undefined);
    assert.equal(core.deleteSession(name), undefined);
  });
});
