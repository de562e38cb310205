/**
 * The message core's turn (publish-batch.ts): the publishes of one event-loop turn share one
 * append, and the log refuses entries one by one (appendEach), so a message the log refuses (a
 * topic over the 65,500-byte rule, reaching the core without the protocols' check) fails alone:
 * the others of the turn, from the same publisher or another, are stored, routed and told so.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server';
import type { Principal } from '../../kernel/auth/principal';
import type { MessageCore } from '../../plugins/messaging/message-core';
import type { PublishOrigin } from '../../plugins/messaging/publish-batch';
import { FakeOutlet, coreMessage, subscription } from './core-helpers';
import { uniqueName } from '../mqtt/session-helpers';

const ADMIN: Principal = { account: 'admin', roles: ['admin'] };

/** A publisher that records what it is told, by token; resolves once `expected` answers came. */
function recordingOrigin(expected: number): PublishOrigin & { answers: Map<number, boolean>; done: Promise<void> } {
  const answers = new Map<number, boolean>();
  let finish!: () => void;
  const done = new Promise<void>((resolve) => { finish = resolve; });
  return {
    answers,
    done,
    mayPause: () => false,
    pausePublishing: () => undefined,
    resumePublishing: () => undefined,
    stored(token, ok) {
      answers.set(token, ok);
      if (answers.size === expected) finish();
    },
    fail(error) {
      throw error;
    },
  };
}

describe('message core: one turn, one append, refused entries fail alone', function () {
  this.timeout(60_000);
  let server: TestServer;
  let core: MessageCore;

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'messaging'] });
    core = server.engine.need('messaging');
  });
  after(() => server?.close());

  it('a message with a 65,501-byte topic is refused alone; the turn\'s other messages are stored, routed and acknowledged', async () => {
    const root = uniqueName('turn');
    const outlet = new FakeOutlet(10);
    const { session } = core.openSession(uniqueName('reader'), ADMIN, { cleanStart: true, expiryInterval: 0, kind: 'mqApi' }, outlet);
    core.subscribe(session, `${root}/#`, subscription(1));
    const tooLong = `${root}/${'é'.repeat(32_750)}`;
    const first = recordingOrigin(3);
    const second = recordingOrigin(1);
    // One turn: all four are taken before the turn's append.
    core.publish(coreMessage(`${root}/a`, 'a1', 1), first, 1);
    core.publish(coreMessage(tooLong, 'bad', 1), first, 2);
    core.publish(coreMessage(`${root}/a`, 'a2', 1), first, 3);
    core.publish(coreMessage(`${root}/b`, 'b1', 1), second, 1);
    await Promise.all([first.done, second.done]);
    assert.deepEqual([...first.answers], [[1, true], [2, false], [3, true]]);
    assert.deepEqual([...second.answers], [[1, true]]);
    const log = server.engine.need('storage').messageLog;
    assert.equal(log.countTopic(`${root}/a`), 2);
    assert.equal(log.countTopic(`${root}/b`), 1);
    assert.equal(log.getTopic(tooLong), undefined);
    await outlet.waitForCount(3);
    assert.deepEqual(outlet.payloads(), ['a1', 'a2', 'b1']);
    core.closeSession(session, outlet, false);
  });
});
