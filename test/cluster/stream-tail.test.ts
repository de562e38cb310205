/**
 * StreamTail (plugins/cluster-nats/catch-up.ts), the stream-info request that reads under
 * `cluster_read_consistency: "latest"` and catch-ups share: a caller shares only a request sent
 * after it called (one already on its way may miss a write acknowledged meanwhile), at most one
 * is in flight, and a request the library leaves hanging is given up after the timeout. The
 * stream's answers are held by the test, so every ordering is chosen, not raced.
 */
import assert from 'node:assert/strict';
import { StreamTail } from '../../plugins/cluster-nats/catch-up';

interface Asked { resolve(lastSeq: number): void; reject(error: Error): void }

function fakeLink(): { link: any; asked: Asked[] } {
  const asked: Asked[] = [];
  const link = {
    jsm: {
      streams: {
        info: () => new Promise((resolve, reject) => {
          asked.push({ resolve: (lastSeq) => resolve({ state: { last_seq: lastSeq } }), reject });
        }),
      },
    },
  };
  return { link, asked };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('cluster: the stream-tail request reads and catch-ups share', function () {
  it('callers that come while a request is on its way share ONE next request, sent once that one is answered, and get its answer', async () => {
    const { link, asked } = fakeLink();
    const tail = new StreamTail(link, 60_000);
    const first = tail.latest();
    assert.equal(asked.length, 1);
    const later = Array.from({ length: 20 }, () => tail.latest());
    await settle();
    assert.equal(asked.length, 1, 'nothing more is sent while the first is on its way');
    asked[0].resolve(10);
    assert.equal(await first, 10);
    await settle();
    assert.equal(asked.length, 2, 'one request for all twenty, sent after the first was answered');
    asked[1].resolve(12);
    assert.deepEqual(await Promise.all(later), Array(20).fill(12));
  });

  it('a caller after every request was answered sends a new one', async () => {
    const { link, asked } = fakeLink();
    const tail = new StreamTail(link, 60_000);
    const one = tail.latest();
    asked[0].resolve(3);
    assert.equal(await one, 3);
    const two = tail.latest();
    assert.equal(asked.length, 2);
    asked[1].resolve(4);
    assert.equal(await two, 4);
  });

  it('a failed request fails its callers only; the callers queued behind it get the next one', async () => {
    const { link, asked } = fakeLink();
    const tail = new StreamTail(link, 60_000);
    const first = tail.latest();
    const queued = tail.latest();
    asked[0].reject(new Error('no quorum'));
    await assert.rejects(first, /no quorum/);
    await settle();
    assert.equal(asked.length, 2);
    asked[1].resolve(7);
    assert.equal(await queued, 7);
  });

  it('a request never answered is given up after the timeout, and the next caller sends a new one', async () => {
    const { link, asked } = fakeLink();
    const tail = new StreamTail(link, 50);
    await assert.rejects(tail.latest(), /did not answer within 50 ms/);
    const next = tail.latest();
    assert.equal(asked.length, 2);
    asked[1].resolve(9);
    assert.equal(await next, 9);
  });
});
