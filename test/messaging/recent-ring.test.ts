/**
 * The message core's ring of recent messages (plugins/messaging/recent-ring.ts): its slots are a
 * power of two at or above `mq_ring_messages`, it holds at most `mq_ring_bytes` of payload, and a
 * message it no longer holds is not found (the catch-up then reads the log).
 */
import assert from 'node:assert/strict';
import { RecentRing } from '../../plugins/messaging/recent-ring';
import { coreMessage } from './core-helpers';

function sequenced(sequence: number, payload = `m${sequence}`) {
  const message = coreMessage('ring/t', payload);
  message.sequence = sequence;
  return message;
}

describe('message core: the ring of recent messages', function () {
  it('rounds its slots up to a power of two; a message overwritten by a later sequence is no longer found', function () {
    const ring = new RecentRing<string>(100, 1 << 20);
    assert.equal(ring.capacity, 128);
    for (let sequence = 1; sequence <= 200; sequence++) ring.put(sequenced(sequence), `match ${sequence}`);
    assert.equal(ring.at(72), undefined, 'slot 72 holds sequence 200 now');
    assert.equal(ring.at(73)?.payload.toString(), 'm73');
    assert.equal(ring.matchesAt(73), 'match 73');
    assert.equal(ring.at(200)?.payload.toString(), 'm200');
    assert.equal(ring.at(201), undefined);
  });

  it('keeps no more payload bytes than its bound, nor a payload over 4 KB; freed bytes are used again', function () {
    const ring = new RecentRing<string>(8, 10);
    ring.put(sequenced(1, 'aaaa'), 'x');
    ring.put(sequenced(2, 'bbbb'), 'x');
    ring.put(sequenced(3, 'cccc'), 'x'); // 12 bytes would pass the bound of 10
    assert.ok(ring.at(1) && ring.at(2));
    assert.equal(ring.at(3), undefined);
    ring.put(sequenced(9, 'dddd'), 'x'); // replaces sequence 1 in slot 1: its 4 bytes are freed
    assert.equal(ring.at(1), undefined);
    assert.equal(ring.at(9)?.payload.toString(), 'dddd');

    const wide = new RecentRing<string>(8, 1 << 20);
    wide.put(sequenced(1, 'x'.repeat(4097)), 'x');
    assert.equal(wide.at(1), undefined, 'a payload over 4 KB is read from the log');
  });
});
