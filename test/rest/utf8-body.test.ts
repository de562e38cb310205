/**
 * Request bodies that are not UTF-8 are refused, never stored with U+FFFD in place of the bytes
 * sent: REST answers 400 (12009, as for any body that is not JSON) and /api HTTP 400 with an
 * envelope (as for malformed JSON); valid multi-byte UTF-8 is stored as sent. lib/http/utf8-body.ts.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readResponse, startServer, type HttpResult, type TestServer } from '../helpers/server';
import { PREFIX } from './rest-client';

/** `{"name": "<bytes>"}` with raw bytes inside the string. */
function bodyWithName(bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from('{"name": "'), bytes, Buffer.from('"}')]);
}

/** One request with exactly these body bytes. */
function sendBytes(method: string, url: string, body: Buffer, auth = true): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(body.length) };
  if (auth) headers.authorization = `Basic ${Buffer.from('admin:ADMIN').toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => readResponse(res, resolve));
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes that are not UTF-8, and where the first bad one is among them. */
const INVALID = [
  ['a lone continuation byte', Buffer.from([0x80]), 0],
  ['a cut two-byte sequence', Buffer.from([0xc3]), 0],
  ['an overlong encoding of "/"', Buffer.from([0xc0, 0xaf]), 0],
  ['an encoded surrogate (U+D800)', Buffer.from([0xed, 0xa0, 0x80]), 0],
  ['0xFF', Buffer.from([0x41, 0xff, 0x42]), 1],
] as const;
/** Bytes before the name's value in bodyWithName. */
const NAME_AT = Buffer.byteLength('{"name": "');

describe('http: request bodies that are not UTF-8', function () {
  this.timeout(30_000);
  let server: TestServer;
  const records = (): number => server.engine.need('storage').countRecords('main', 'people');

  before(async () => {
    server = await startServer({ plugins: ['storage-lmdb', 'data', 'http', 'rest', 'actions'] });
    const created = await sendBytes('POST', `${server.http}${PREFIX}/table/main/people`, Buffer.from(JSON.stringify({ fields: [{ name: 'name', type: 'varchar', length: 40 }] })));
    assert.equal(created.status, 200, created.text);
  });
  after(() => server?.close());

  for (const [what, bytes, badAt] of INVALID) {
    it(`REST POST /record with ${what} in a string answers 400 12009 and stores nothing`, async () => {
      const before = records();
      const answer = await sendBytes('POST', `${server.http}${PREFIX}/record/main/people`, bodyWithName(bytes));
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json.errorCode, 12009);
      assert.match(answer.json.errorMessage, new RegExp(`not valid UTF-8 \\(first bad byte at offset ${NAME_AT + badAt}\\)`));
      assert.equal(records(), before);
    });

    it(`POST /api with ${what} in a string answers HTTP 400 with an envelope 12009 and stores nothing`, async () => {
      const before = records();
      const envelope = Buffer.concat([
        Buffer.from('{"api": "db", "action": "insertRecords", "params": {"tableName": "people", "sourceData": [{"name": "'),
        bytes,
        Buffer.from('"}]}}'),
      ]);
      const answer = await sendBytes('POST', `${server.http}/api`, envelope, false);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json.errorCode, 12009);
      assert.match(answer.json.errorMessage, /not valid UTF-8/);
      assert.equal(records(), before);
    });
  }

  it('REST PUT/PATCH with bytes that are not UTF-8 answer 400 12009 and leave the record as it was', async () => {
    const created = await sendBytes('POST', `${server.http}${PREFIX}/record/main/people`, bodyWithName(Buffer.from('Åsa')));
    assert.equal(created.status, 200, created.text);
    const id = created.json._ids[0];
    for (const method of ['PUT', 'PATCH']) {
      const answer = await sendBytes(method, `${server.http}${PREFIX}/record/main/people/${id}`, bodyWithName(Buffer.from([0x41, 0xfe])));
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json.errorCode, 12009);
    }
    const record = await sendBytes('GET', `${server.http}${PREFIX}/record/main/people/${id}`, Buffer.alloc(0));
    assert.equal(record.json.name, 'Åsa');
  });

  it('valid multi-byte UTF-8 (2, 3 and 4 bytes) is stored as sent', async () => {
    const name = 'Åsa € 𝄞';
    const created = await sendBytes('POST', `${server.http}${PREFIX}/record/main/people`, bodyWithName(Buffer.from(name)));
    assert.equal(created.status, 200, created.text);
    const record = await sendBytes('GET', `${server.http}${PREFIX}/record/main/people/${created.json._ids[0]}`, Buffer.alloc(0));
    assert.equal(record.json.name, name);
  });
});
