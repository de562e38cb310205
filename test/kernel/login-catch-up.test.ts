/**
 * kernel/auth/login-catch-up.ts: refused logins share catch-ups with the replicated log, and each
 * waits only for one that started after it came in.
 */
import assert from 'node:assert/strict';
import { LoginCatchUp } from '../../kernel/auth/login-catch-up';
import type { ReplicaCatchUp } from '../../kernel/bus/command-bus';

/** A replica whose catch-ups the test ends one by one. */
function heldReplica(): { replica: ReplicaCatchUp; started: number; finish(value: boolean): void } {
  const pending: Array<(value: boolean) => void> = [];
  const state = {
    started: 0,
    replica: { catchUp: () => { state.started++; return new Promise<boolean>((resolve) => pending.push(resolve)); } },
    finish(value: boolean) { pending.shift()!(value); },
  };
  return state;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LoginCatchUp: refused logins share catch-ups', () => {
  it('no replica: false at once, nothing started', async () => {
    const catchUp = new LoginCatchUp(() => null, 60_000);
    assert.equal(await catchUp.catchUp(catchUp.ticket()), false);
  });

  it('logins that came in before a catch-up started share it; one that came in after it started waits for ONE queued catch-up shared with every later one', async () => {
    const held = heldReplica();
    const catchUp = new LoginCatchUp(() => held.replica, 60_000);
    const early = [catchUp.ticket(), catchUp.ticket()];
    const first = catchUp.catchUp(early[0]);
    const second = catchUp.catchUp(early[1]);
    assert.equal(held.started, 1);
    // Came in while the first was under way: its tail may predate their writes.
    const late = [catchUp.ticket(), catchUp.ticket(), catchUp.ticket()];
    const queued = late.map((ticket) => catchUp.catchUp(ticket));
    assert.equal(held.started, 1, 'the queued one starts only when the first ends');
    held.finish(true);
    assert.deepEqual(await Promise.all([first, second]), [true, true]);
    await turn();
    assert.equal(held.started, 2, 'one queued catch-up for all three');
    // A login that came in before the second started is served by it too.
    const alsoServed = catchUp.catchUp(late[0]);
    held.finish(true);
    assert.deepEqual(await Promise.all([...queued, alsoServed]), [true, true, true, true]);
    assert.equal(held.started, 2);
    // Long after: a new login needs a new catch-up.
    const next = catchUp.catchUp(catchUp.ticket());
    assert.equal(held.started, 3);
    held.finish(false);
    assert.equal(await next, false);
  });

  it('a catch-up that never ends: the login waits only its bound, and is answered false', async () => {
    const held = heldReplica();
    const catchUp = new LoginCatchUp(() => held.replica, 20);
    assert.equal(await catchUp.catchUp(catchUp.ticket()), false);
  });
});
