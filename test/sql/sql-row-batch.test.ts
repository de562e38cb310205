/**
 * A scan's records reach a worker's SQLite as row batches (plugins/sql/row-batch.ts) written into
 * the worker's shared reply buffer: records that fill the buffer many times over, records larger
 * than the whole buffer, and values of every column type read back as stored, through real HTTP.
 * Every range here reads more than the main-thread slice's 64 records, so a worker answers it.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { db, login, ok } from '../actions/action-client';
import { REPLY_BYTES } from '../../plugins/sql/sync-call';
import { query, startSqlServer } from './sql-client';

/** Text of about `bytes` bytes of UTF-8 with characters of 1, 2, 3 and 4 bytes, different per `seed`. */
function mixedText(bytes: number, seed: number): string {
  const pieces = ['a', 'é', '€', '😀'];
  let text = `#${seed}:`;
  let size = Buffer.byteLength(text);
  for (let i = seed; size < bytes; i++) {
    const piece = pieces[i % pieces.length];
    text += piece;
    size += Buffer.byteLength(piece);
  }
  return text;
}

describe('sql: scans read through row batches', function () {
  this.timeout(180_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startSqlServer({});
    token = await login(server);
  });
  after(() => server.close());

  async function table(name: string, fields: unknown[]): Promise<void> {
    await ok(server, db('createTable', token, { tableName: name, fields }));
    await ok(server, db('createIndex', token, { tableName: name, indexName: 'by_n', fields: [{ name: 'n' }] }));
  }

  it('reads a range whose records fill the reply buffer several times whole and in order (values never cut at the buffer\'s end)', async function () {
    await table('wide', [{ name: 'n', type: 'integer' }, { name: 't', type: 'lvarchar' }]);
    // Records of uneven sizes (60–160 KB), about 3 reply buffers in all: batch ends fall inside values of every UTF-8 width.
    const rows = Array.from({ length: 120 }, (_, n) => ({ n, t: mixedText(60_000 + ((n * 7919) % 100_000), n) }));
    const total = rows.reduce((sum, row) => sum + Buffer.byteLength(row.t), 0);
    assert.ok(total > 2.5 * REPLY_BYTES, `${total} bytes`);
    for (let i = 0; i < rows.length; i += 30) await ok(server, db('insertRecords', token, { tableName: 'wide', sourceData: rows.slice(i, i + 30) }));
    const range = await ok(server, query(token, 'SELECT n, t, length(t) AS chars FROM wide WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, rows.length], maxRecords: rows.length }));
    assert.equal(range.data.length, rows.length);
    range.data.forEach((row: any, i: number) => {
      assert.equal(row.n, i);
      assert.equal(row.chars, [...rows[i].t].length, `row ${i}: SQLite's length()`);
      assert.ok(row.t === rows[i].t, `row ${i} differs`);
    });
  });

  it('reads a record larger than the whole reply buffer, first, amid and last in a range', async function () {
    // The text is the record's last value: nothing after it in the record would show a value cut short.
    await table('huge', [{ name: 'n', type: 'integer' }, { name: 'b', type: 'lvarbinary' }, { name: 't', type: 'lvarchar' }]);
    const big = (n: number): string => mixedText(REPLY_BYTES + 1000 + n, n);
    const rows = Array.from({ length: 100 }, (_, n) => ({ n, t: n === 0 || n === 50 || n === 99 ? big(n) : `small ${n}`, b: Buffer.from([n, 0, 255]).toString('hex') }));
    for (const row of rows) await ok(server, db('insertRecords', token, { tableName: 'huge', sourceData: [row] }));
    const range = await ok(server, query(token, 'SELECT n, t, b FROM huge WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, rows.length], maxRecords: rows.length }));
    assert.equal(range.data.length, rows.length);
    range.data.forEach((row: any, i: number) => {
      assert.equal(row.n, i);
      assert.ok(row.t === rows[i].t, `row ${i} differs (${String(row.t).length} characters, expected ${rows[i].t.length})`);
      assert.equal(String(row.b).toLowerCase(), rows[i].b);
    });
  });

  it('reads every column type, NULLs, empty text and binaries, astral characters and records written before columns were added as the db actions read them', async function () {
    await table('alltypes', [
      { name: 'n', type: 'integer' }, { name: 'bt', type: 'bit' }, { name: 'ti', type: 'tinyint' }, { name: 'si', type: 'smallint' },
      { name: 'bi', type: 'bigint' }, { name: 're', type: 'real' }, { name: 'fl', type: 'float' }, { name: 'mo', type: 'money' },
      { name: 'nu', type: 'number', length: 12, scale: 3 }, { name: 'da', type: 'date' }, { name: 'tm', type: 'time' },
      { name: 'ts', type: 'timestamp' }, { name: 'ch', type: 'char', length: 4 }, { name: 'vc', type: 'varchar', length: 20 },
      { name: 'lv', type: 'lvarchar' }, { name: 'bn', type: 'binary', length: 4 }, { name: 'vb', type: 'varbinary', length: 8 },
      { name: 'lb', type: 'lvarbinary' }, { name: 'js', type: 'json' }, { name: 'va', type: 'variant' },
    ]);
    const patterns: Array<Record<string, unknown>> = [
      {
        bt: true, ti: 5, si: -300, bi: '9007199254740993', re: 1.5, fl: 0.1, mo: 12.34, nu: 1234.567, da: '2024-02-29', tm: '23:59:59.999',
        ts: '2024-02-29T23:59:59.999', ch: 'ab', vc: 'héllo 😀', lv: 'x', bn: 'cafebabe', vb: '00ff', lb: '', js: { a: [1, 'two', null] }, va: { b: 2 },
      },
      {},
      { bt: false, ti: -128, si: 0, bi: -5, re: -2, fl: -1e300, mo: 0, nu: -0.001, ch: '', vc: '', lv: '', bn: '00000000', vb: '', lb: '00', js: 'text', va: 'a string' },
      { bi: '-9223372036854775808', fl: 2 ** 53, vc: '😀😀', lv: '\u0000nul\u0000', lb: 'ff'.repeat(300), js: 5, va: 7 },
      { lv: '東京'.repeat(5000), js: [], va: [1, [2]], ts: '1970-01-01T00:00:00.000' },
    ];
    const rows = Array.from({ length: 100 }, (_, n) => ({ n, ...patterns[n % patterns.length] }));
    await ok(server, db('insertRecords', token, { tableName: 'alltypes', sourceData: rows.slice(0, 50) }));
    // Columns added after half the records: those read as the columns' defaults, the others as written.
    await ok(server, db('alterTable', token, { tableName: 'alltypes', addFields: [{ name: 'added', type: 'varchar', length: 10, defaultValue: 'dflt' }, { name: 'added_n', type: 'integer', defaultValue: 7 }] }));
    await ok(server, db('insertRecords', token, { tableName: 'alltypes', sourceData: rows.slice(50).map((row) => ({ ...row, added: row.n % 2 === 0 ? 'given' : null, added_n: row.n })) }));
    const objects = { responseOptions: { dataFormat: 'objects' } };
    const expected = await ok(server, db('getRecordsByTable', token, { tableName: 'alltypes', maxRecords: 100 }, objects));
    const range = await ok(server, query(token, 'SELECT * FROM alltypes WHERE n >= ? AND n < ? ORDER BY n', { sqlParams: [0, 100], maxRecords: 100 }, objects));
    assert.equal(range.data.length, 100);
    range.data.forEach((row: any, i: number) => assert.deepEqual(row, expected.data[i], `row ${i}`));
  });

  it('keeps a scan\'s binary values while another table is read in the same statement (a join)', async function () {
    await table('left_bins', [{ name: 'n', type: 'integer' }, { name: 'b', type: 'varbinary', length: 8 }]);
    await table('right_bins', [{ name: 'n', type: 'integer' }, { name: 'b', type: 'varbinary', length: 8 }]);
    const bytes = (side: number, n: number): string => Buffer.from([side, n, side, n]).toString('hex');
    await ok(server, db('insertRecords', token, { tableName: 'left_bins', sourceData: Array.from({ length: 200 }, (_, n) => ({ n, b: bytes(0xaa, n) })) }));
    await ok(server, db('insertRecords', token, { tableName: 'right_bins', sourceData: Array.from({ length: 200 }, (_, n) => ({ n, b: bytes(0xbb, n) })) }));
    // The outer range is read in one batch; each inner lookup is a call of its own while the outer row is current.
    const joined = await ok(server, query(token, 'SELECT l.n AS n, l.b AS lb, r.b AS rb FROM left_bins l JOIN right_bins r ON r.n = l.n WHERE l.n >= ? AND l.n < ? ORDER BY l.n', { sqlParams: [0, 200], maxRecords: 200 }));
    assert.equal(joined.data.length, 200);
    joined.data.forEach((row: any, n: number) => {
      assert.deepEqual([row.n, String(row.lb).toLowerCase(), String(row.rb).toLowerCase()], [n, bytes(0xaa, n), bytes(0xbb, n)]);
    });
  });
});
