/**
 * A cursor whose filter matches little walks far more rows than it returns: its fetches, its
 * skips and its `moreRecords` peek let the server answer others meanwhile (the broker shares this
 * event loop), and keep the cursor's position exact. The same technique as
 * test/rest/long-scan.test.ts, through POST /api.
 */
import assert from 'node:assert/strict';
import type { ReadSlices, StoragePort } from '../../kernel/storage/storage-port';
import type { TestServer } from '../helpers/server';
import { admin, db, login, ok, post, startActionServer } from './action-client';

const ROWS = 50_000;
/** n of the only two rows with kind 'rare', far into the index. */
const RARE = [ROWS - 5, ROWS - 2];

type Walk = 'fetch' | 'skip';
const WALKS: readonly Walk[] = ['fetch', 'skip'];

describe('actions: long cursor walks', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let storage: StoragePort;
  let openCursor: StoragePort['openCursor'];
  /** Called when a cursor starts to fetch or skip, while armed. */
  let walking: (() => void) | undefined;
  /** The walking operations run on cursors, in order: `fetch at once`, `skip in slices`... */
  const calls: string[] = [];
  /** While set, operations run in slices make no progress (their walk waits for the test). */
  let held: Promise<void> | undefined;

  before(async () => {
    server = await startActionServer();
    token = await login(server);
    await ok(server, db('createTable', token, { tableName: 'readings', fields: [{ name: 'n', type: 'integer' }, { name: 'kind', type: 'varchar', length: 8 }] }));
    await ok(server, db('createIndex', token, { tableName: 'readings', indexName: 'by_n', fields: [{ name: 'n' }] }));
    for (let start = 0; start < ROWS; start += 1000) {
      const sourceData = Array.from({ length: 1000 }, (_, i) => ({ n: start + i, kind: RARE.includes(start + i) ? 'rare' : 'plain' }));
      await ok(server, db('insertRecords', token, { tableName: 'readings', sourceData }));
    }
    storage = server.engine.need('storage') as StoragePort;
    openCursor = storage.openCursor.bind(storage);
    storage.openCursor = (...args) => {
      const cursor = openCursor(...args);
      const methods = cursor as unknown as Record<Walk, (...params: unknown[]) => ReadSlices<unknown>>;
      for (const name of WALKS) {
        const method = methods[name];
        methods[name] = (...params: unknown[]) => {
          walking?.();
          const operation = method.apply(cursor, params);
          let first = true;
          return {
            next: (maxVisits: number) => {
              const inSlices = maxVisits !== Number.POSITIVE_INFINITY;
              if (first) calls.push(`${name} ${inSlices ? 'in slices' : 'at once'}`);
              first = false;
              return held !== undefined && inSlices ? { done: false } : operation.next(maxVisits);
            },
          };
        };
      }
      return cursor;
    };
  });

  after(async () => {
    if (storage !== undefined) storage.openCursor = openCursor;
    await server?.close();
  });

  const objects = { responseOptions: { dataFormat: 'objects' } };
  const ns = (result: { data: Array<{ n: number }> }): number[] => result.data.map((record) => record.n);

  async function open(filter: string, skipRecords = 0): Promise<string> {
    const opened = await ok(server, db('getRecordsByIndex', token, { tableName: 'readings', indexName: 'by_n', tableFilter: filter, returnCursor: true, skipRecords }));
    return opened.cursorId as string;
  }

  function fetch(cursorId: string, params: Record<string, unknown> = {}): Promise<any> {
    return ok(server, db('getRecordsFromCursor', token, { cursorId, fetchRecords: 10, ...params }, objects));
  }

  /**
   * Sends `request`; once a cursor starts walking, sends another request (pingSession); returns
   * the order in which the two were answered. This process is the client too: the ping can go
   * out only when the walk lets the loop run.
   */
  async function answeredFirst(request: () => Promise<unknown>): Promise<string[]> {
    const finished: string[] = [];
    const started = new Promise<void>((resolve) => { walking = resolve; });
    try {
      const walk = request().then(() => { finished.push('walk'); });
      await started;
      walking = undefined;
      const ping = post(server, admin('pingSession', undefined)).then((response) => {
        assert.equal(response.status, 200);
        assert.equal(response.json.errorCode, 0);
        finished.push('ping');
      });
      await Promise.all([walk, ping]);
    } finally {
      walking = undefined;
    }
    return finished;
  }

  it('answers another request while a cursor fetch walks every row for its filter', async () => {
    const cursorId = await open("kind == 'none'");
    let fetched: any;
    const order = await answeredFirst(async () => { fetched = await fetch(cursorId); });
    assert.deepEqual(ns(fetched), []);
    assert.equal(fetched.moreRecords, false);
    assert.deepEqual(order, ['ping', 'walk']);
  });

  it('answers another request while a fetch\'s skipRecords walks', async () => {
    const cursorId = await open("kind == 'none'");
    const order = await answeredFirst(() => fetch(cursorId, { skipRecords: 3, fetchRecords: 1 }));
    assert.deepEqual(order, ['ping', 'walk']);
  });

  it('answers another request while returnCursor applies skipRecords', async () => {
    let cursorId!: string;
    const order = await answeredFirst(async () => { cursorId = await open("kind == 'none'", 1); });
    assert.deepEqual(order, ['ping', 'walk']);
    assert.deepEqual(ns(await fetch(cursorId)), []);
  });

  it('answers another request while moreRecords looks past the last match for another', async () => {
    const cursorId = await open('n == 10');
    let fetched: any;
    // the fetch finds n = 10 at once; the peek for moreRecords walks every row after it
    const order = await answeredFirst(async () => { fetched = await fetch(cursorId, { fetchRecords: 1 }); });
    assert.deepEqual(ns(fetched), [10]);
    assert.equal(fetched.moreRecords, false);
    assert.deepEqual(order, ['ping', 'walk']);
  });

  it('finds matches far in, keeping the position: backward after forward, skip, both ends', async () => {
    const cursorId = await open("kind == 'rare'");
    const first = await fetch(cursorId, { fetchRecords: 1 });
    assert.deepEqual(ns(first), [RARE[0]]);
    assert.equal(first.moreRecords, true);
    const second = await fetch(cursorId, { fetchRecords: 5 });
    assert.deepEqual(ns(second), [RARE[1]]);
    assert.equal(second.moreRecords, false);
    const back = await fetch(cursorId, { fetchRecords: -5 });
    assert.deepEqual(ns(back), [RARE[0]], 'backward from the last record returned');
    assert.equal(back.moreRecords, false);
    assert.deepEqual(ns(await fetch(cursorId, { fetchRecords: -5, startFrom: 'afterLastRecord' })), [RARE[1], RARE[0]]);
    assert.deepEqual(ns(await fetch(cursorId, { startFrom: 'beforeFirstRecord', skipRecords: 1 })), [RARE[1]]);
    assert.deepEqual(ns(await fetch(cursorId, { fetchRecords: -1, skipRecords: 1 })), [], 'skipped back over RARE[0]: nothing before it');
    assert.deepEqual(ns(await fetch(cursorId)), [RARE[1]], 'the skip left the cursor on RARE[0]');
    assert.deepEqual(ns(await fetch(await open("kind == 'rare'", 1))), [RARE[1]]);
    assert.deepEqual(ns(await fetch(await open("kind == 'rare'", 2))), []);
  });

  it('runs two fetches of one cursor one after the other', async () => {
    const cursorId = await open("kind == 'rare'");
    const [a, b] = await Promise.all([fetch(cursorId, { fetchRecords: 1 }), fetch(cursorId, { fetchRecords: 1 })]);
    assert.deepEqual([...ns(a), ...ns(b)].sort((x, y) => x - y), RARE, 'each got the next record');
    assert.deepEqual([a.moreRecords, b.moreRecords].sort(), [false, true]);
    assert.deepEqual(ns(await fetch(cursorId)), []);
    assert.deepEqual(ns(await fetch(cursorId, { fetchRecords: -1 })), [RARE[0]], 'the position is the last record returned');
  });

  it('skips far without a filter in slices too; a fetch without a filter stays one call', async () => {
    calls.length = 0;
    const opened = await ok(server, db('getRecordsByIndex', token, { tableName: 'readings', indexName: 'by_n', returnCursor: true, skipRecords: 30_000 }));
    assert.deepEqual(ns(await fetch(opened.cursorId, { fetchRecords: 2, skipRecords: 1000 })), [31_000, 31_001]);
    assert.deepEqual(calls, ['skip in slices', 'skip at once', 'fetch at once']);
    const fetched = await fetch(opened.cursorId, { fetchRecords: -2, skipRecords: 21_000 });
    assert.deepEqual(ns(fetched), [10_000, 9_999], "skipped 30,000 down to 10,001");
    assert.equal(fetched.moreRecords, true);
  });

  /** Holds the walks of sliced operations while `during` runs, once a cursor starts to walk. */
  async function whileWalking(request: Promise<unknown>, started: Promise<void>, during: () => Promise<void>): Promise<void> {
    let release!: () => void;
    held = new Promise<void>((resolve) => { release = resolve; });
    try {
      await started;
      walking = undefined;
      await during();
    } finally {
      held = undefined;
      release();
    }
    await request;
  }

  it('a cursor closed while its fetch walks ends the fetch with 4080', async () => {
    const cursorId = await open("kind == 'none'");
    const started = new Promise<void>((resolve) => { walking = resolve; });
    const walk = post(server, db('getRecordsFromCursor', token, { cursorId, fetchRecords: 10 }));
    await whileWalking(walk, started, async () => { await ok(server, db('closeCursor', token, { cursorId })); });
    const response = await walk;
    assert.equal(response.status, 200);
    assert.equal(response.json.errorCode, 4080, response.text);
  });

  it('a table deleted while returnCursor skips ends the request with 4023 (last: deletes the table)', async () => {
    const started = new Promise<void>((resolve) => { walking = resolve; });
    const opening = post(server, db('getRecordsByIndex', token, { tableName: 'readings', indexName: 'by_n', tableFilter: "kind == 'none'", returnCursor: true, skipRecords: 1 }));
    await whileWalking(opening, started, async () => { await ok(server, db('deleteTables', token, { tableNames: ['readings'] })); });
    const response = await opening;
    assert.equal(response.status, 200);
    assert.equal(response.json.errorCode, 4023, response.text);
  });
});
