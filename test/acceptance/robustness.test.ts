/**
 * Robustness fuzz suite (black box, real HTTP).
 *
 * The product promises (README, docs/errors.md, docs/rest.md, docs/actions.md) that every bad input
 * gets a clear error with a stable integer errorCode, never a 5xx / 12001, that the server keeps
 * serving everyone else, and that a failed request stores nothing.
 *
 * For each REST endpoint family and each action, requests are generated from valid templates and
 * mutated with a seeded PRNG (type swaps, removals, additions, boundary numbers, 70,000-character
 * strings, nesting 5,000 deep, odd unicode, prototype-pollution keys, raw invalid UTF-8 bytes...).
 * Every answer is checked; after every failed write the scratch table must be unchanged, and after
 * every batch the seeded data must read back exactly and `GET /` must answer.
 *
 * Any violation fails the batch with its exact request and response. The bugs this suite found
 * are fixed; their minimal reproductions stay below as regression tests ("fixed bugs").
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readResponse, startServer, type TestServer } from '../helpers/server';

// ------------------------------------------------------------------------------------- PRNG

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)];
const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

// ------------------------------------------------------------------------------------- raw HTTP

interface Reply { status: number; text: string; json: any; error?: string }

/** One request on a fresh connection (a server may close a connection after an error). */
function send(method: string, url: string, options: { body?: Buffer | string; auth?: [string, string] | null; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const payload = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  if (payload) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  const auth = options.auth === undefined ? ['admin', 'ADMIN'] : options.auth;
  if (auth) headers.authorization = `Basic ${Buffer.from(`${auth[0]}:${auth[1]}`).toString('base64')}`;
  const secure = url.startsWith('https:');
  return new Promise((resolve) => {
    let settled = false;
    const done = (reply: Reply) => { if (!settled) { settled = true; resolve(reply); } };
    const req = (secure ? httpsRequest : httpRequest)(url, { method, headers, agent: false, rejectUnauthorized: false }, (res) => {
      readResponse(res, ({ status, text, json }) => done({ status, text, json }));
      res.on('error', (error) => done({ status: 0, text: '', json: undefined, error: String(error) }));
    });
    req.setTimeout(15_000, () => { req.destroy(new Error('timeout: no answer in 15 s')); });
    req.on('error', (error) => done({ status: 0, text: '', json: undefined, error: String(error) }));
    if (payload) req.write(payload);
    req.end();
  });
}

// ------------------------------------------------------------------------------------- nasty values

const LONG = 'x'.repeat(70_000);
/**
 * Values nested 5,000 deep are carried as marker strings and spliced in as raw JSON text by
 * `serialize` (JSON.stringify of such values can overflow the test process's own stack).
 */
const DEEP_ARRAY = '@@DEEP_ARRAY@@';
const DEEP_OBJECT = '@@DEEP_OBJECT@@';
const DEEP_TEXT: Record<string, string> = {
  [`"${DEEP_ARRAY}"`]: `${'['.repeat(5000)}${']'.repeat(5000)}`,
  [`"${DEEP_OBJECT}"`]: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
};
function serialize(value: unknown): string {
  let text: string;
  try { text = JSON.stringify(value) ?? 'null'; } catch { text = '{}'; }
  return text.replace(/"@@DEEP_(ARRAY|OBJECT)@@"/g, (marker) => DEEP_TEXT[marker]);
}

/** An object with an own enumerable property, even `__proto__` (JSON.stringify writes it). */
function own(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}
function copyObject(source: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) own(copy, key, source[key]);
  return copy;
}
const protoObject = () => own({ name: 'p' }, '__proto__', { polluted: true, isAdmin: true });

const NASTY_VALUES: ReadonlyArray<() => unknown> = [
  () => null, () => true, () => false, () => 0, () => -0, () => -1, () => 1.5, () => 0.1,
  () => 2 ** 31, () => 2 ** 31 - 1, () => -(2 ** 31) - 1, () => 2 ** 32, () => 2 ** 53, () => 2 ** 53 + 2,
  () => -(2 ** 53), () => 1e308, () => -1e308, () => 5e-324, () => 1e21,
  () => '', () => ' ', () => 'NaN', () => '-Infinity', () => 'Infinity', () => '-0', () => '1e3', () => '-1',
  () => '0x10', () => '9'.repeat(400), () => LONG, () => '\ud800', () => '\udfff\ud800x', () => 'a\u0000b',
  () => '😀'.repeat(40), () => '\u202egnp.exe', () => 'e\u0301\u0301\u0301', () => '\ufeff', () => '__proto__',
  () => 'constructor', () => 'prototype', () => 'toString', () => 'hasOwnProperty', () => '../../etc/passwd',
  () => '%00', () => "' OR 1=1 --", () => '${x}', () => '07/04/2024', () => '2024-02-30T25:61:61.999Z',
  () => ({}), () => [], () => [[]], () => [null], () => DEEP_ARRAY, () => DEEP_OBJECT, () => protoObject(),
  () => ({ constructor: { prototype: { polluted: true } } }), () => new Array(1000).fill(1), () => [LONG],
];
const NASTY_KEYS: readonly string[] = [
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', '', ' ', 'k'.repeat(5000), '😀', '\ud800',
  'a.b', 'ID', '_id', 'id', 'NAME', 'unknownProperty', 'revers', 'top',
];

function nastyValue(rng: Rng, original: unknown): unknown {
  if (rng() < 0.3) {
    // a type swap related to the original value
    switch (typeof original) {
      case 'number': return pick(rng, [String(original), [original], { value: original }, -original, original * 1e300, original + 0.5]);
      case 'string': return pick(rng, [Number(original), [original], original.toUpperCase(), original + original, original.slice(1), { v: original }]);
      case 'boolean': return pick(rng, [String(original), Number(original), [original]]);
      case 'object':
        if (original === null) return pick(rng, ['null', 0, {}]);
        if (Array.isArray(original)) return pick(rng, [original[0], { ...original }, [original], original.length]);
        return pick(rng, [[original], Object.values(original as object), serialize(original)]);
    }
  }
  return pick(rng, NASTY_VALUES)();
}

/** Returns a mutated copy of `value` (the template is never changed). */
function mutate(value: unknown, rng: Rng, depth = 0): unknown {
  const isArray = Array.isArray(value);
  const isObject = typeof value === 'object' && value !== null && !isArray;
  if ((isArray || isObject) && depth < 8 && rng() < 0.75) {
    const keys: Array<string | number> = isArray ? (value as unknown[]).map((_, i) => i) : Object.keys(value as object);
    if (keys.length > 0 && rng() < 0.7) {
      const key = pick(rng, keys);
      const inner = mutate((value as any)[key], rng, depth + 1);
      if (isArray) { const copy = [...(value as unknown[])]; copy[key as number] = inner; return copy; }
      return own(copyObject(value as Record<string, unknown>), key as string, inner);
    }
    const op = rng();
    if (isArray) {
      const copy = [...(value as unknown[])];
      if (op < 0.35 && copy.length > 0) copy.splice(int(rng, 0, copy.length - 1), 1);
      else if (op < 0.7) copy.splice(int(rng, 0, copy.length), 0, copy.length > 0 && rng() < 0.5 ? copy[0] : nastyValue(rng, copy[0]));
      else if (op < 0.85 && copy.length > 0) return copy.concat(copy, copy);
      else return copy[0] ?? {};
      return copy;
    }
    const copy = copyObject(value as Record<string, unknown>);
    if (op < 0.35 && keys.length > 0) { delete copy[pick(rng, keys) as string]; return copy; }
    if (op < 0.75) return own(copy, pick(rng, NASTY_KEYS), nastyValue(rng, undefined));
    if (op < 0.9 && keys.length > 0) { // rename a key (case / prefix change)
      const key = pick(rng, keys) as string;
      const renamed = rng() < 0.5 ? key.toUpperCase() : `${key}_`;
      const v = copy[key]; delete copy[key]; return own(copy, renamed, v);
    }
    return [copy];
  }
  return nastyValue(rng, value);
}

/** Mutations of the raw bytes of a JSON body. */
function corruptBytes(body: Buffer, rng: Rng): Buffer {
  const op = rng();
  const at = body.length === 0 ? 0 : int(rng, 0, body.length - 1);
  if (op < 0.2) return body.subarray(0, at); // truncated
  if (op < 0.4) { // invalid UTF-8 inside the text
    const quote = body.indexOf(0x22, at);
    const where = quote >= 0 ? quote + 1 : at;
    const bad = pick(rng, [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xe2, 0x82])]);
    return Buffer.concat([body.subarray(0, where), bad, body.subarray(where)]);
  }
  if (op < 0.5) return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]); // BOM
  if (op < 0.6) return Buffer.concat([body, Buffer.from(pick(rng, [',', '}', ']', ' garbage', '\u0000', '{}']))]);
  if (op < 0.7) { const copy = Buffer.from(body); if (copy.length) copy[at] = int(rng, 0, 255); return copy; }
  if (op < 0.8) return Buffer.from(pick(rng, ['', ' ', 'null', 'true', '0', '"x"', '[]', '{', 'NaN', 'Infinity', '{"a":1,}', "{'a':1}", '\u0000']));
  if (op < 0.9) return Buffer.from(body.toString('utf8').replace(/:/g, ': 1e999 ||'));
  return Buffer.concat([body.subarray(0, at), Buffer.from('\ud800', 'utf16le'), body.subarray(at)]); // UTF-16 junk
}

const NASTY_SEGMENTS: readonly string[] = [
  '', ' ', '__proto__', 'constructor', 'prototype', 'toString', 'a'.repeat(65), 'a'.repeat(1000), '😀', 'tä', '1abc', 'a b',
  'a/b', '..', '.', '%', 'a\u0000b', 'NULL', 'null', '-1', '0', '1.5', '1e3', '0x1', '9007199254740993', '99999999999999999999',
  'Infinity', 'NaN', '\ud800', 'MAIN', "x' OR '1'='1",
];
function encodeSegment(segment: string): string {
  try { return encodeURIComponent(segment); } catch { return '%ED%A0%80'; }
}

// ------------------------------------------------------------------------------------- checks

interface Violation { signature: string; detail: string; known?: string }

function snippet(value: string | Buffer | undefined, max = 300): string {
  if (value === undefined) return '(none)';
  const text = Buffer.isBuffer(value) ? value.toString('latin1') : value;
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}

/**
 * Known bugs the fuzz may tolerate while their reproduction test (block "fixed bugs") is open.
 * Every bug found so far is fixed, so none is tolerated: any such violation fails its batch.
 */
function knownBug(_reply: Reply, _body: string | Buffer | undefined, _action: boolean): string | undefined {
  return undefined;
}

function restViolation(reply: Reply): string | undefined {
  if (reply.error) return `no answer: ${reply.error}`;
  if (reply.status >= 500) return `HTTP ${reply.status}`;
  if (reply.status >= 200 && reply.status < 300) return undefined;
  if (reply.status < 400) return `unexpected HTTP ${reply.status}`;
  const json = reply.json;
  if (!json || typeof json !== 'object' || Array.isArray(json)) return `error body is not a JSON object (HTTP ${reply.status})`;
  if (!Number.isInteger(json.errorCode)) return `errorCode is not an integer (HTTP ${reply.status})`;
  if (json.errorCode === 12001) return 'errorCode 12001 (internal)';
  if (typeof json.errorMessage !== 'string' || json.errorMessage === '') return 'errorMessage missing or empty';
  return undefined;
}

/** `omitted`: the request asked (responseOptions.omit) to drop top-level properties, which may include errorCode/errorMessage. */
function actionViolation(reply: Reply, omitted = false): string | undefined {
  if (reply.error) return `no answer: ${reply.error}`;
  if (reply.status >= 500) return `HTTP ${reply.status}`;
  const json = reply.json;
  if (!json || typeof json !== 'object' || Array.isArray(json)) return `answer is not a JSON object (HTTP ${reply.status})`;
  if (omitted && reply.status === 200 && (!('errorCode' in json) || !('errorMessage' in json))) {
    return json.errorCode === 12001 ? 'errorCode 12001 (internal)' : undefined;
  }
  if (!Number.isInteger(json.errorCode)) return `errorCode is not an integer (HTTP ${reply.status})`;
  if (reply.status === 400 && json.errorCode !== 12009) return `HTTP 400 with errorCode ${json.errorCode} (400 is only for non-JSON bodies)`;
  if (reply.status === 413 && json.errorCode !== 12028) return `HTTP 413 with errorCode ${json.errorCode}`;
  if (reply.status !== 200 && reply.status !== 400 && reply.status !== 413) return `HTTP ${reply.status}`;
  if (json.errorCode === 12001) return 'errorCode 12001 (internal)';
  if (json.errorCode !== 0 && (typeof json.errorMessage !== 'string' || json.errorMessage === '')) return 'errorMessage missing or empty';
  if (json.errorCode === 0 && json.errorMessage !== '') return 'success with a non-empty errorMessage';
  return undefined;
}

class Batch {
  readonly violations: Violation[] = [];
  sent = 0;
  succeeded = 0;
  record(kind: string, method: string, url: string, body: string | Buffer | undefined, reply: Reply, problem: string | undefined): void {
    this.sent += 1;
    if (reply.status >= 200 && reply.status < 300 && (reply.json?.errorCode === undefined || reply.json.errorCode === 0)) this.succeeded += 1;
    if (!problem) return;
    const known = knownBug(reply, body, kind.startsWith('action'));
    const message = reply.json?.errorMessage ?? reply.json?.message ?? reply.error ?? '';
    this.violations.push({
      signature: `${kind} ${method} → ${problem}: ${String(message).slice(0, 80)}`,
      detail: `${method} ${snippet(url, 200)}\n  body: ${snippet(body)}\n  → HTTP ${reply.status} ${snippet(reply.text)}`,
      known,
    });
  }
  /** Fails on violations that are not known bugs; prints a summary of the known ones. */
  verdict(label: string): void {
    const unknown = this.violations.filter((v) => !v.known);
    const known = this.violations.filter((v) => v.known);
    console.log(`      [${label}] ${this.sent} requests, ${this.succeeded} succeeded, ${this.sent - this.succeeded} refused`);
    if (known.length > 0) {
      const counts = new Map<string, number>();
      for (const v of known) counts.set(v.known!, (counts.get(v.known!) ?? 0) + 1);
      console.log(`      [${label}] known-bug hits: ${[...counts].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
      if (process.env.ROBUSTNESS_VERBOSE) for (const v of known) console.log(`        ${v.signature}\n        ${v.detail.slice(0, 600)}`);
    }
    if (unknown.length > 0) {
      const seen = new Map<string, Violation>();
      for (const v of unknown) if (!seen.has(v.signature)) seen.set(v.signature, v);
      const report = [...seen.values()].slice(0, 8).map((v) => `- ${v.signature}\n  ${v.detail}`).join('\n');
      assert.fail(`${label}: ${unknown.length} of ${this.sent} requests broke the error contract (${seen.size} distinct):\n${report}`);
    }
  }
}

// ------------------------------------------------------------------------------------- the suite

let server: TestServer;
let B: string;

const PEOPLE_FIELDS = [
  { name: 'name', type: 'VARCHAR', length: 48 },
  { name: 'age', type: 'INTEGER', length: 4 },
  { name: 'born', type: 'timestamp' },
];
const PEOPLE = [
  { name: 'Ann', age: 30, born: '07/04/1994 09:05:01.000' },
  { name: 'Bob', age: 40, born: null },
  { name: 'Cy', age: 50, born: '01/31/2000 23:59:59.999' },
  { name: 'Dee', age: 60, born: null },
  { name: 'Eve', age: 70, born: null },
];
/** Scratch tables that fuzzed writes may change: every column type. */
const SCRATCH_FIELDS = [
  { name: 'name', type: 'varchar', length: 20 },
  { name: 'age', type: 'integer' },
  { name: 'small', type: 'smallint' },
  { name: 'tiny', type: 'tinyint' },
  { name: 'big', type: 'bigint' },
  { name: 'r', type: 'real' },
  { name: 'f', type: 'float' },
  { name: 'm', type: 'money' },
  { name: 'n', type: 'number', length: 10, scale: 2 },
  { name: 'b', type: 'bit' },
  { name: 'd', type: 'date' },
  { name: 't', type: 'time' },
  { name: 'ts', type: 'timestamp' },
  { name: 'c', type: 'char', length: 3 },
  { name: 'lv', type: 'lvarchar' },
  { name: 'bin', type: 'binary', length: 4 },
  { name: 'vb', type: 'varbinary', length: 8 },
  { name: 'doc', type: 'json' },
  { name: 'v', type: 'variant' },
  { name: 'code', type: 'varchar', length: 10 },
];
const SCRATCH_ROWS = [
  { name: 'Ann', age: 30, code: 'A1', doc: { city: 'Oslo' }, b: true },
  { name: 'Bob', age: 40, code: 'B2', doc: { city: 'Rome' }, big: '9007199254740993' },
  { name: 'Cy', age: 50, code: 'C3', doc: null, ts: '07/04/2024 09:05:01.250' },
];

async function rest(method: string, path: string, body?: unknown): Promise<Reply> {
  return send(method, `${B}${path}`, { body: body === undefined ? undefined : JSON.stringify(body) });
}
async function restOk(method: string, path: string, body?: unknown): Promise<any> {
  const reply = await rest(method, path, body);
  assert.equal(reply.status, 200, `${method} ${path}: ${reply.status} ${reply.text}`);
  return reply.json;
}
async function action(envelope: unknown): Promise<Reply> {
  return send('POST', `${server.http}/api`, { body: JSON.stringify(envelope), auth: null });
}
async function actionOk(envelope: Record<string, unknown>): Promise<any> {
  const reply = await action(envelope);
  assert.equal(reply.status, 200, reply.text);
  assert.equal(reply.json.errorCode, 0, `${String(envelope.action)}: ${reply.text.slice(0, 300)}`);
  return reply.json;
}
async function login(username = 'admin', password = 'ADMIN'): Promise<string> {
  return (await actionOk({ api: 'admin', action: 'createSession', params: { username, password } })).authToken;
}

/** Every record of a table in record-ID order, through REST. */
async function readAll(table: string): Promise<any[]> {
  const reply = await rest('POST', `/query/main/${table}/id_pk?top=1000000`, { find: { id: { operator: '>=', value: 1 } } });
  assert.equal(reply.status, 200, `reading ${table}: ${reply.status} ${reply.text}`);
  return reply.json._records;
}

let peopleSnapshot: any[];
let sentinelSnapshot: any[];

/** The batch invariants: seeded data intact, the server answers GET / and a known-good action read. */
async function assertHealthy(token: string): Promise<void> {
  const root = await send('GET', `${server.http}/`, { auth: null });
  assert.equal(root.status, 200, `GET / → ${root.status} ${root.text}`);
  assert.deepEqual(await readAll('people'), peopleSnapshot, 'the seeded table "people" changed');
  assert.deepEqual(await readAll('sentinel'), sentinelSnapshot, 'the seeded table "sentinel" changed');
  assert.deepEqual((await restOk('GET', '/record/main/people/1')), PEOPLE[0]);
  const viaAction = await actionOk({ api: 'db', action: 'getRecordsByTable', authToken: token, params: { tableName: 'sentinel', maxRecords: 1000 }, responseOptions: { dataFormat: 'objects' } });
  assert.deepEqual(viaAction.result.data.map((r: any) => r.name), sentinelSnapshot.map((r) => r.name));
  const tables = (await restOk('GET', '/table/main'))._tables as string[];
  for (const name of ['people', 'sentinel', 'fz', 'fzi', 'fza']) assert.ok(tables.includes(name), `table ${name} disappeared`);
}

/**
 * A reader that runs while a batch is sent and checks that others are still served correctly.
 * Paced by the batch's own requests, not by a clock: `alongside()`, called as the batch sends a
 * request, starts a good read in flight at the same time (unless the previous read is still waiting
 * for its answer). `stop()` waits for the last read and reports the failures.
 */
function backgroundReader(): { alongside(): void; stop(): Promise<void> } {
  const failures: string[] = [];
  let reads = 0;
  let reading: Promise<void> | undefined;
  const read = async () => {
    const reply = await rest('GET', '/record/main/sentinel/2');
    reads += 1;
    if (reply.status !== 200 || reply.json?.name !== sentinelSnapshot[1].name) failures.push(`GET sentinel/2 → ${reply.status} ${snippet(reply.text)}`);
  };
  return {
    alongside() {
      reading ??= read().catch((error: unknown) => { failures.push(`GET sentinel/2 → ${String(error)}`); }).finally(() => { reading = undefined; });
    },
    async stop() {
      await reading;
      assert.deepEqual(failures, [], `a concurrent good reader was not served (${reads} reads)`);
    },
  };
}

// ---------------------------------------------------------- REST request generation

interface RestTemplate {
  method: string;
  segments: () => string[]; // after /engine/api/v1
  query?: Record<string, string>;
  body?: unknown;
  /** The table whose records a (failed) request must not change. */
  guards?: string;
  /** Segment positions that may be fuzzed without touching seeded tables. */
  fuzzSegments?: number[];
}

interface RestRequest { method: string; url: string; body?: Buffer | string; guards?: string }

function buildRest(template: RestTemplate, rng: Rng): RestRequest {
  let segments = template.segments();
  let query = template.query ? { ...template.query } : undefined;
  let body: unknown = template.body;
  let raw: Buffer | string | undefined;
  const mutations = int(rng, 1, 3);
  let rawMode = false;
  for (let i = 0; i < mutations; i++) {
    const op = rng();
    if (op < 0.6 && body !== undefined) body = mutate(body, rng);
    else if (op < 0.7 && template.fuzzSegments && template.fuzzSegments.length > 0) {
      segments = [...segments];
      segments[pick(rng, template.fuzzSegments)] = pick(rng, NASTY_SEGMENTS);
    } else if (op < 0.8 && query) {
      query = { ...query };
      const key = pick(rng, [...Object.keys(query), 'skip', 'top', 'extra']);
      if (rng() < 0.2) delete query[key];
      else query[key] = pick(rng, ['0', '-1', '1.5', '2147483648', '9007199254740993', '1e308', 'NaN', '', 'abc', '0x10', ' 1', '1,2', String(2 ** 53), '%00', '-0', 'true', '[]']);
    } else if (op < 0.9) rawMode = true;
    else body = body === undefined ? mutate({}, rng) : mutate(body, rng);
  }
  const text = body === undefined ? undefined : serialize(body);
  raw = text;
  if (rawMode) raw = corruptBytes(Buffer.from(text ?? ''), rng);
  const qs = query ? `?${Object.entries(query).map(([k, v]) => `${k}=${encodeSegment(v)}`).join('&')}` : '';
  return { method: template.method, url: `${B}/${segments.map(encodeSegment).join('/')}${qs}`, body: raw, guards: template.guards };
}

let counter = 0;
const fresh = (prefix: string) => `${prefix}${(counter += 1)}`;

async function runRestBatch(label: string, seed: number, templates: RestTemplate[], count: number): Promise<Batch> {
  const rng = mulberry32(seed);
  const batch = new Batch();
  const reader = backgroundReader();
  const snapshots = new Map<string, any[]>();
  for (const t of templates) if (t.guards && !snapshots.has(t.guards)) snapshots.set(t.guards, await readAll(t.guards));
  for (let i = 0; i < count; i++) {
    const request = buildRest(pick(rng, templates), rng);
    reader.alongside();
    const reply = await send(request.method, request.url, { body: request.body });
    batch.record(`REST ${label}`, request.method, request.url, request.body, reply, restViolation(reply));
    if (request.guards && request.method !== 'GET') {
      const failed = reply.status < 200 || reply.status >= 300;
      const after = await readAll(request.guards);
      if (failed && JSON.stringify(after) !== JSON.stringify(snapshots.get(request.guards))) {
        batch.violations.push({
          signature: `REST ${label} ${request.method} → a failed request changed stored data`,
          detail: `${request.method} ${snippet(request.url, 200)}\n  body: ${snippet(request.body)}\n  → HTTP ${reply.status} ${snippet(reply.text)}\n  before: ${snippet(JSON.stringify(snapshots.get(request.guards)))}\n  after: ${snippet(JSON.stringify(after))}`,
        });
      }
      snapshots.set(request.guards, after);
    }
  }
  await reader.stop();
  return batch;
}

// ---------------------------------------------------------- action request generation

interface ActionTemplate {
  api: 'admin' | 'db' | 'mq';
  action: string;
  params: () => Record<string, unknown>;
  responseOptions?: Record<string, unknown>;
  /** The table whose records a failed request must not change. */
  guards?: string;
  /** Runs with a throwaway session (the action may end or alter it). */
  throwaway?: boolean;
}

async function runActionBatch(label: string, seed: number, templates: ActionTemplate[], count: number, state: { token: string; throwaway: string }): Promise<Batch> {
  const rng = mulberry32(seed);
  const batch = new Batch();
  const reader = backgroundReader();
  const snapshots = new Map<string, any[]>();
  for (const t of templates) if (t.guards && !snapshots.has(t.guards)) snapshots.set(t.guards, await readAll(t.guards));
  for (let i = 0; i < count; i++) {
    const template = pick(rng, templates);
    const token = template.throwaway ? state.throwaway : state.token;
    let envelope: unknown = { api: template.api, action: template.action, params: template.params(), authToken: token, requestId: i, ...(template.responseOptions ? { responseOptions: template.responseOptions } : {}) };
    const mutations = int(rng, 1, 3);
    let rawMode = false;
    for (let m = 0; m < mutations; m++) {
      const op = rng();
      const e = envelope as Record<string, unknown>;
      if (op < 0.65 && typeof e === 'object' && e && !Array.isArray(e) && typeof e.params === 'object' && e.params) {
        envelope = own(copyObject(e), 'params', mutate(e.params, rng));
      } else if (op < 0.75 && typeof e === 'object' && e && !Array.isArray(e)) {
        envelope = own(copyObject(e), pick(rng, ['responseOptions', 'requestId', 'debug', 'apiVersion', 'api']), nastyValue(rng, undefined));
      } else if (op < 0.8 && typeof e === 'object' && e && !Array.isArray(e)) {
        envelope = own(copyObject(e), 'responseOptions', mutate({ dataFormat: 'objects', numberFormat: 'string', binaryFormat: 'base64', includeFields: ['name'], excludePaths: ['doc.city'], omit: ['errorMessage'] }, rng));
      } else if (op < 0.9) rawMode = true;
      else if (op < 0.95) envelope = mutate(envelope, rng);
    }
    // keep the session-bearing fields pointing at a live session unless the fuzzer changed them on purpose
    let body: Buffer | string = serialize(envelope);
    if (rawMode) body = corruptBytes(Buffer.from(body), rng);
    reader.alongside();
    const reply = await send('POST', `${server.http}/api`, { body, auth: null, headers: rng() < 0.2 ? { 'content-type': pick(rng, ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data']) } : undefined });
    const problem = actionViolation(reply, (Buffer.isBuffer(body) ? body.toString('latin1') : body).includes('"omit"'));
    batch.record(`action ${template.api}.${template.action}`, 'POST', '/api', body, reply, problem);
    if (template.guards) {
      const failed = reply.status !== 200 || reply.json?.errorCode !== 0;
      const after = await readAll(template.guards);
      if (failed && JSON.stringify(after) !== JSON.stringify(snapshots.get(template.guards))) {
        batch.violations.push({
          signature: `action ${template.action} → a failed request changed stored data`,
          detail: `POST /api\n  body: ${snippet(body)}\n  → HTTP ${reply.status} ${snippet(reply.text)}\n  before: ${snippet(JSON.stringify(snapshots.get(template.guards)))}\n  after: ${snippet(JSON.stringify(after))}`,
        });
      }
      snapshots.set(template.guards, after);
    }
    if (template.throwaway) {
      const ping = await action({ api: 'admin', action: 'pingSession', authToken: state.throwaway });
      if (ping.json?.errorCode !== 0) state.throwaway = await login();
    }
    // the main session may have been ended or altered through a mutated envelope; renew it if so
    if (i % 10 === 9 || template.api === 'admin') {
      const ping = await action({ api: 'admin', action: 'pingSession', authToken: state.token });
      if (ping.json?.errorCode !== 0) state.token = await login();
    }
  }
  await reader.stop();
  return batch;
}

describe('robustness: fuzzed requests get clear errors and never harm stored data', function () {
  this.timeout(120_000);
  let token: string;
  const state = { token: '', throwaway: '' };

  before(async () => {
    server = await startServer();
    B = `${server.http}/engine/api/v1`;
    await restOk('POST', '/table/main/people', { fields: PEOPLE_FIELDS });
    await restOk('POST', '/index/main/people/by_age', { fields: [{ name: 'age', ascending: false }, { name: 'name' }] });
    await restOk('POST', '/index/main/people/by_name', { fields: [{ name: 'name' }], unique: true });
    await restOk('POST', '/record/main/people', PEOPLE);
    await restOk('POST', '/table/main/sentinel', { fields: [{ name: 'name', type: 'varchar', length: 20 }, { name: 'n', type: 'bigint' }] });
    await restOk('POST', '/record/main/sentinel', [{ name: 'keep-1', n: 1 }, { name: 'keep-2', n: '9223372036854775807' }, { name: 'keep-3', n: -(2 ** 53) + 1 }]);
    for (const table of ['fz', 'fzi', 'fza']) {
      await restOk('POST', `/table/main/${table}`, { fields: SCRATCH_FIELDS });
      await restOk('POST', `/record/main/${table}`, SCRATCH_ROWS);
      await restOk('POST', `/index/main/${table}/by_code`, { fields: [{ name: 'code' }], unique: true });
      await restOk('POST', `/index/main/${table}/by_city`, { fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 20 }, { name: 'age', ascending: false }] });
    }
    peopleSnapshot = await readAll('people');
    sentinelSnapshot = await readAll('sentinel');
    assert.equal(peopleSnapshot.length, PEOPLE.length);
    token = await login();
    state.token = token;
    state.throwaway = await login();
    await actionOk({ api: 'admin', action: 'createAccount', authToken: token, params: { username: 'fzuser', password: 'fzpass', roles: ['reader'] } });
    await actionOk({ api: 'admin', action: 'createRole', authToken: token, params: { roleName: 'fzrole', grants: [{ commands: ['record.get'], resources: ['table:main/*'] }] } });
  });

  after(async () => { await server?.close(); });

  afterEach(async () => { await assertHealthy(state.token); });

  // ------------------------------------------------------------------ REST

  const sampleRecord = { name: 'Zed', age: 33, small: 7, tiny: 1, big: '123', r: 1.5, f: 2.25, m: 10.5, n: 12.34, b: true, d: '07/04/2024', t: '9:05:01.250', ts: '07/04/2024 09:05:01.250', c: 'abc', lv: 'long', bin: '01020304', vb: 'FF', doc: { city: 'Bonn', tags: [1, 2] }, v: { any: 'thing' } };

  it('REST tables: create / list / delete', async () => {
    const templates: RestTemplate[] = [
      { method: 'POST', segments: () => ['table', 'main', fresh('fzt_')], body: { fields: [{ name: 'name', type: 'VARCHAR', length: 48 }, { name: 'age', type: 'INTEGER', length: 4 }, { name: 'born', type: 'timestamp' }, { name: 'doc', type: 'json' }] }, fuzzSegments: [1, 2] },
      { method: 'POST', segments: () => ['table', 'main', fresh('fzt_')], body: { fields: [{ name: 'id', type: 'bigint', primaryKey: 1 }, { name: 'x', type: 'number', length: 10, scale: 2, nullable: false, defaultValue: 1, autoValue: 'none' }] }, fuzzSegments: [1, 2] },
      { method: 'GET', segments: () => ['table', 'main'], fuzzSegments: [1] },
      { method: 'DELETE', segments: () => ['table', 'main', `fzt_${counter}`], fuzzSegments: [1, 2] },
    ];
    const batch = await runRestBatch('tables', 101, templates, 400);
    batch.verdict('REST tables');
  });

  it('REST indexes: create / read / list / delete', async () => {
    const templates: RestTemplate[] = [
      { method: 'POST', segments: () => ['index', 'main', 'fzi', fresh('fzx_')], body: { fields: [{ name: 'age', ascending: false }, { name: 'name' }], unique: false }, fuzzSegments: [3], guards: 'fzi' },
      { method: 'POST', segments: () => ['index', 'main', 'fzi', fresh('fzx_')], body: { fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 20 }], unique: true }, fuzzSegments: [3], guards: 'fzi' },
      { method: 'GET', segments: () => ['index', 'main', 'fzi', 'by_city'], fuzzSegments: [1, 2, 3] },
      { method: 'GET', segments: () => ['index', 'main', 'fzi'], fuzzSegments: [1, 2] },
      { method: 'DELETE', segments: () => ['index', 'main', 'fzi', `fzx_${counter}`], fuzzSegments: [3], guards: 'fzi' },
    ];
    const batch = await runRestBatch('indexes', 202, templates, 400);
    batch.verdict('REST indexes');
  });

  it('REST records: create / read / replace / patch / delete (failed writes store nothing)', async () => {
    const templates: RestTemplate[] = [
      { method: 'POST', segments: () => ['record', 'main', 'fz'], body: sampleRecord, guards: 'fz' },
      { method: 'POST', segments: () => ['record', 'main', 'fz'], body: [sampleRecord, { name: 'Yan', age: 1, code: 'Y1' }, { name: 'Xi' }], guards: 'fz' },
      { method: 'GET', segments: () => ['record', 'main', 'fz', '1'], fuzzSegments: [3] },
      { method: 'PUT', segments: () => ['record', 'main', 'fz', '2'], body: { ...sampleRecord, code: 'B2' }, fuzzSegments: [3], guards: 'fz' },
      { method: 'PATCH', segments: () => ['record', 'main', 'fz', '1'], body: { age: 31, doc: { city: 'Lima' } }, fuzzSegments: [3], guards: 'fz' },
      { method: 'PATCH', segments: () => ['record', 'main', 'fz', '1'], body: [{ age: 33 }, { _id: 2, age: 41, name: 'Bo' }, { _id: 3, ts: '2024-07-04T09:05:01.250' }], guards: 'fz' },
      { method: 'DELETE', segments: () => ['record', 'main', 'fz', String(counter % 7 + 4)], fuzzSegments: [3], guards: 'fz' },
    ];
    const batch = await runRestBatch('records', 303, templates, 1500);
    batch.verdict('REST records');
  });

  it('REST query: find / advanced_find / filter / select / top / skip', async () => {
    const q = { top: '10', skip: '0' };
    const templates: RestTemplate[] = [
      { method: 'POST', segments: () => ['query', 'main', 'people', 'by_age'], query: q, body: { find: { age: { operator: '>=', value: 30, excludeuppervalue: 60 } }, filter: 'name != "Bob" && (age > 1 || born == null)', select: ['name', 'age'], reverse: false } },
      { method: 'POST', segments: () => ['query', 'main', 'people', 'by_name'], query: q, body: { find: { name: { operator: 'between', lowervalue: 'A', excludeuppervalue: 'D' } } } },
      { method: 'POST', segments: () => ['query', 'main', 'people', 'by_age'], query: q, body: { advanced_find: { find_set: { length: 4, fields: { age: 40 } } }, reverse: true } },
      { method: 'POST', segments: () => ['query', 'main', 'people', 'by_age'], query: q, body: { advanced_find: { find_record: { operator: '>', fields: { age: 40, name: 'Bob' } } } } },
      { method: 'POST', segments: () => ['query', 'main', 'people', 'id_pk'], query: q, body: { find: { id: { operator: '=', value: 2 } }, filter: 'born == "07/04/1994 09:05:01.000" || not (age <> 30)' } },
      { method: 'POST', segments: () => ['query', 'main', 'fzi', 'by_city'], query: q, body: { find: { city: { operator: '>=', value: 'A' } }, filter: 'doc == null or b = true', select: ['doc', 'bin', 'ts'] } },
      { method: 'POST', segments: () => ['query', 'main', 'fzi', 'by_city'], query: q, body: { advanced_find: { find_record: { operator: '<=', fields: { 'doc.city': 'Rome', age: 40 } } } } },
    ];
    for (const t of templates) t.fuzzSegments = [1, 2, 3];
    const batch = await runRestBatch('query', 404, templates, 900);
    // the filter language alone: mutate the filter text
    const rng = mulberry32(405);
    const pieces = ['age', 'name', 'born', '==', '!=', '<', '<=', '>', '>=', '=', '<>', '&&', '||', '!', 'and', 'or', 'not', '(', ')', '"x"', "'y'", '"', '1', '-1', '1e308', '1e999', '9'.repeat(400), '-0', 'true', 'false', 'null', '\\', '.', ',', '$', '\u0000', '😀', '\ud800', 'doc.city', '__proto__', 'constructor', ' '];
    for (let i = 0; i < 150; i++) {
      let filter = Array.from({ length: int(rng, 1, 12) }, () => pick(rng, pieces)).join(rng() < 0.7 ? ' ' : '');
      if (rng() < 0.1) filter = '('.repeat(int(rng, 150, 20_000)) + filter;
      if (rng() < 0.1) filter = Array(int(rng, 100, 5000)).fill('age > 1').join(pick(rng, [' && ', ' || ', ' and not ']));
      const body = JSON.stringify({ find: { age: { operator: '>=', value: 0 } }, filter });
      const url = `${B}/query/main/people/by_age?top=100`;
      const reply = await send('POST', url, { body });
      batch.record('REST filter', 'POST', url, body, reply, restViolation(reply));
    }
    batch.verdict('REST query');
  });

  it('REST: raw and framework-level inputs (non-JSON, bad methods, odd headers, huge bodies)', async () => {
    const batch = new Batch();
    const cases: Array<{ method: string; path: string; body?: Buffer | string; headers?: Record<string, string> }> = [
      { method: 'POST', path: '/record/main/fz', body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }, // {"name":"\xff\xfe"}
      { method: 'POST', path: '/record/main/fz', body: '{"name": "a"', headers: { 'content-type': 'text/plain' } },
      { method: 'POST', path: '/record/main/fz', body: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { method: 'POST', path: '/record/main/fz', body: '{"name":"a"}', headers: { 'content-type': 'application/json; charset=utf-16' } },
      { method: 'POST', path: '/record/main/fz', body: '{"name":"a"}', headers: { 'content-encoding': 'gzip' } },
      { method: 'POST', path: '/record/main/fz', body: '', headers: { 'content-type': 'application/json' } },
      { method: 'POST', path: '/record/main/fz', body: `{"name": "a", "lv": "${'y'.repeat(1_000_000)}"}` },
      { method: 'POST', path: '/record/main/fz', body: `[${new Array(20_000).fill('{"name":"bulk","age":"oops"}').join(',')}]` },
      { method: 'PATCH', path: '/record/main/fz/1', body: `[${new Array(5_000).fill('{"_id":1,"age":1}').join(',')},{"_id":99999,"age":2}]` },
      { method: 'PUT', path: '/table/main/fz', body: '{}' },
      { method: 'OPTIONS', path: '/table/main' },
      { method: 'HEAD', path: '/table/main' },
      { method: 'TRACE', path: '/table/main' },
      { method: 'GET', path: '/table/main?top=1&top=2' },
      { method: 'GET', path: '/../../../etc/passwd' },
      { method: 'GET', path: '/table/main/../../../..' },
      { method: 'GET', path: '/record/main/fz/1?__proto__[x]=1' },
      { method: 'POST', path: '/query/main/people/by_age?top=1&top=2', body: '{"find":{"age":{"operator":">=","value":1}}}' },
      { method: 'POST', path: '/query/main/people/by_age?top[]=1', body: '{"find":{"age":{"operator":">=","value":1}}}' },
      { method: 'POST', path: '/query/main/people/by_age?top=1', body: '{"find":{"age":{"operator":">=","value":1}},"find":{"age":{"operator":"<","value":1}}}' },
    ];
    for (const c of cases) {
      const reply = await send(c.method, `${B}${c.path}`, { body: c.body, headers: c.headers });
      batch.record('REST raw', c.method, c.path, c.body, reply, c.method === 'HEAD' ? (reply.status >= 500 ? `HTTP ${reply.status}` : undefined) : restViolation(reply));
    }
    // missing / wrong credentials on every route family
    for (const path of ['/table/main', '/index/main/people', '/record/main/people/1', '/openapi']) {
      for (const auth of [null, ['admin', 'wrong'], ['', ''], ['a'.repeat(10_000), 'x'], ['admin\u0000', 'ADMIN']] as Array<[string, string] | null>) {
        const reply = await send('GET', `${B}${path}`, { auth });
        batch.record('REST auth', 'GET', path, undefined, reply, restViolation(reply));
        // 429: refused because this account has failed too often (settings: login_failures_before_backoff)
        if (!reply.error && reply.status !== 401 && reply.status !== 429 && reply.status !== 400 && reply.status !== 431) batch.violations.push({ signature: `bad credentials accepted on ${path}`, detail: `${JSON.stringify(auth?.[0].slice(0, 20))} → ${reply.status}` });
      }
      for (const header of ['Basic', 'Basic !!!', 'Bearer x', `Basic ${Buffer.from('nocolon').toString('base64')}`, `Basic ${'A'.repeat(6000)}`]) {
        const reply = await send('GET', `${B}${path}`, { auth: null, headers: { authorization: header } });
        batch.record('REST auth header', 'GET', `${path} [Authorization: ${header.slice(0, 30)}]`, undefined, reply, restViolation(reply));
      }
    }
    batch.verdict('REST raw');
  });

  // ------------------------------------------------------------------ actions

  const records = [{ name: 'Qa', age: 5, code: 'Q1', ts: '2024-07-11T21:18:01.000', bin: 'DEADBEEF', doc: { city: 'Kyiv' }, v: [1, 'two'] }, { name: 'Qb', age: 6, big: '-9223372036854775808' }];

  it('actions: envelope-level fuzz (every field, every type)', async () => {
    const rng = mulberry32(505);
    const batch = new Batch();
    const base = { api: 'db', action: 'getRecordsByTable', params: { tableName: 'fza', maxRecords: 5 }, authToken: state.token, requestId: 'r1', apiVersion: '1.0', debug: 'max', responseOptions: { dataFormat: 'objects' } };
    for (let i = 0; i < 250; i++) {
      let envelope: unknown = { ...base, authToken: state.token };
      for (let m = int(rng, 1, 3); m > 0; m--) envelope = mutate(envelope, rng);
      let body: Buffer | string = serialize(envelope);
      if (rng() < 0.15) body = corruptBytes(Buffer.from(body), rng);
      const reply = await send('POST', `${server.http}/api`, { body, auth: null });
      batch.record('action envelope', 'POST', '/api', body, reply, actionViolation(reply, (Buffer.isBuffer(body) ? body.toString('latin1') : body).includes('"omit"')));
    }
    for (const raw of ['', ' ', 'null', '[]', '[1]', '"x"', '0', '{', '{"action": "listTables"', Buffer.from([0xff, 0xfe, 0x00]), '{"action": "\\ud800"}', `{"action": "${'a'.repeat(70_000)}"}`, `{"action": "listTables", "requestId": ${'['.repeat(5000)}${']'.repeat(5000)}}`, `{"action": "listTables", "requestId": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`]) {
      const reply = await send('POST', `${server.http}/api`, { body: raw, auth: null });
      batch.record('action raw', 'POST', '/api', raw, reply, actionViolation(reply));
    }
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const reply = await send(method, `${server.http}/api`, { body: '{}', auth: null });
      batch.record('action method', method, '/api', '{}', reply, reply.status >= 500 || reply.error ? `HTTP ${reply.status}` : undefined);
    }
    batch.verdict('actions envelope');
  });

  it('actions: admin api (sessions, accounts, roles)', async () => {
    const grants = [{ commands: ['record.get', 'record.find'], resources: ['table:main/*'] }];
    const templates: ActionTemplate[] = [
      { api: 'admin', action: 'createSession', params: () => ({ username: 'fzuser', password: 'fzpass', description: 'fuzz', defaultApi: 'db', defaultDatabaseName: 'main', defaultOwnerName: 'admin', defaultBinaryFormat: 'hex', defaultVariantFormat: 'json', defaultNumberFormat: 'number', defaultResponseOptions: { dataFormat: 'objects' }, idleConnectionTimeoutSeconds: 60, idleCursorTimeoutSeconds: 60 }) },
      { api: 'admin', action: 'alterSession', params: () => ({ description: 'x', defaultApi: 'admin', defaultResponseOptions: null, idleConnectionTimeoutSeconds: 120 }), throwaway: true },
      { api: 'admin', action: 'deleteSession', params: () => ({}), throwaway: true },
      { api: 'admin', action: 'pingSession', params: () => ({}) },
      { api: 'admin', action: 'describeSessions', params: () => ({ authTokens: [state.throwaway] }) },
      { api: 'admin', action: 'listSessions', params: () => ({}) },
      { api: 'admin', action: 'createAccount', params: () => ({ username: fresh('fzacc_'), password: 'pw', roles: ['reader'], description: 'd' }) },
      { api: 'admin', action: 'alterAccount', params: () => ({ username: 'fzuser', description: 'changed' }) },
      { api: 'admin', action: 'deleteAccount', params: () => ({ username: `fzacc_${counter}` }) },
      { api: 'admin', action: 'listAccounts', params: () => ({}) },
      { api: 'admin', action: 'assignRolesToAccounts', params: () => ({ usernames: ['fzuser'], roleNames: ['fzrole'] }) },
      { api: 'admin', action: 'revokeRolesFromAccounts', params: () => ({ accounts: ['fzuser'], roleNames: ['fzrole'] }) },
      { api: 'admin', action: 'createRole', params: () => ({ roleName: fresh('fzr_'), grants, denies: [{ commands: ['record.delete'], resources: ['table:main/people'] }], description: 'r' }) },
      { api: 'admin', action: 'alterRole', params: () => ({ roleName: 'fzrole', grants, description: 'r2' }) },
      { api: 'admin', action: 'deleteRole', params: () => ({ roleName: `fzr_${counter}` }) },
      { api: 'admin', action: 'listRoles', params: () => ({}) },
      { api: 'mq', action: 'publishMessagesToMq', params: () => ({ topic: 'a/b', messages: [{ payload: 'x' }] }) },
    ];
    const batch = await runActionBatch('admin', 606, templates, 1500, state);
    // admin must still log in with its password, and keep its roles
    await login();
    const accounts = (await actionOk({ api: 'admin', action: 'listAccounts', authToken: state.token, params: {} })).result.accounts;
    assert.ok(accounts.find((a: any) => a.username === 'admin').roles.includes('admin'));
    batch.verdict('actions admin');
  });

  it('actions: db api (databases, tables, indexes, records, cursors, transactions; failed writes store nothing)', async () => {
    const cursor = (await actionOk({ api: 'db', action: 'getRecordsByTable', authToken: state.token, params: { tableName: 'fzi', returnCursor: true } })).result.cursorId;
    let transactionId = (await actionOk({ api: 'db', action: 'createTransaction', authToken: state.token, params: {} })).result.transactionId;
    await actionOk({ api: 'db', action: 'createTable', authToken: state.token, params: { tableName: 'fza_alt', fields: [{ name: 'a', type: 'integer' }] } });
    const read = { tableName: 'fzi', tableFilter: 'age >= 30 && name != "x"', reverseOrder: false, skipRecords: 0, maxRecords: 20 };
    const templates: ActionTemplate[] = [
      { api: 'db', action: 'createDatabase', params: () => ({ databaseName: fresh('fzdb_') }) },
      { api: 'db', action: 'listDatabases', params: () => ({}) },
      { api: 'db', action: 'deleteDatabase', params: () => ({ databaseName: `fzdb_${counter}` }) },
      { api: 'db', action: 'createTable', params: () => ({ databaseName: 'main', ownerName: 'admin', tableName: fresh('fzat_'), fields: [{ name: 'name', type: 'varchar', length: 20, nullable: true, defaultValue: 'n', primaryKey: 0, autoValue: 'none', autoTimestamp: 'none' }, { name: 'amount', type: 'number', length: 10, scale: 2 }, { name: 'stamp', type: 'timestamp', autoValue: 'timestampOnInsert' }] }) },
      { api: 'db', action: 'listTables', params: () => ({ partialTableName: 'fz', tableNames: ['fza', 'fzi'], skipRecords: 0, maxRecords: 10 }) },
      { api: 'db', action: 'describeTables', params: () => ({ tableNames: ['fza', 'people'] }) },
      { api: 'db', action: 'alterTable', params: () => ({ tableName: 'fza_alt', addFields: [{ name: fresh('col_'), type: 'varchar', length: 5 }] }) },
      { api: 'db', action: 'deleteTables', params: () => ({ tableNames: [`fzat_${counter}`] }) },
      { api: 'db', action: 'createIndex', params: () => ({ tableName: 'fza_alt', indexName: fresh('fzai_'), fields: [{ name: 'a', sortDescending: true }], unique: false }) },
      { api: 'db', action: 'createIndex', params: () => ({ tableName: 'fza', indexName: fresh('fzai_'), fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 20 }, { name: 'age', ascending: true }], unique: true }), guards: 'fza' },
      { api: 'db', action: 'listIndexes', params: () => ({ tableName: 'fza' }) },
      { api: 'db', action: 'deleteIndexes', params: () => ({ tableName: 'fza_alt', indexNames: [`fzai_${counter}`] }) },
      { api: 'db', action: 'insertRecords', params: () => ({ tableName: 'fza', dataFormat: 'objects', sourceData: records, binaryFormat: 'hex', variantFormat: 'json' }), guards: 'fza' },
      { api: 'db', action: 'insertRecords', params: () => ({ tableName: 'fza', dataFormat: 'arrays', fieldNames: ['name', 'age', 'bin', 'd'], sourceData: [['Ra', 1, 'AABB', '2024-07-11'], ['Rb', 2, null, null]] }), guards: 'fza' },
      { api: 'db', action: 'updateRecords', params: () => ({ tableName: 'fza', sourceData: [{ id: 1, age: 31 }, { id: '2', name: 'Bobby', doc: { city: 'Pisa' } }] }), guards: 'fza' },
      { api: 'db', action: 'updateRecords', params: () => ({ tableName: 'fza', dataFormat: 'arrays', fieldNames: ['id', 'age'], sourceData: [[3, 51]] }), guards: 'fza' },
      { api: 'db', action: 'deleteRecords', params: () => ({ tableName: 'fza', ids: [counter % 9 + 4] }), guards: 'fza' },
      { api: 'db', action: 'getRecordsByIds', params: () => ({ tableName: 'fzi', ids: [1, '2', 3] }), responseOptions: { dataFormat: 'objects', binaryFormat: 'base64' } },
      { api: 'db', action: 'getRecordsByTable', params: () => ({ ...read }), responseOptions: { includeFields: ['name', 'doc'], includePaths: ['doc.city'], numberFormat: 'string' } },
      { api: 'db', action: 'getRecordsByIndex', params: () => ({ ...read, indexName: 'by_city' }) },
      { api: 'db', action: 'getRecordsInKeyRange', params: () => ({ ...read, indexFilter: { indexName: 'by_code', indexFieldFilters: [{ fieldName: 'code', operator: '>=', value: 'A' }, { fieldName: 'code', operator: '<', value: 'C' }] } }) },
      { api: 'db', action: 'getRecordsInKeyRange', params: () => ({ ...read, indexName: 'by_city', indexRange: { '>=': ['Oslo', 40], '<': ['Rome'] } }) },
      { api: 'db', action: 'getRecordsFromCursor', params: () => ({ cursorId: cursor, fetchRecords: 2, skipRecords: 0, startFrom: 'beforeFirstRecord' }) },
      { api: 'db', action: 'closeCursor', params: () => ({ cursorId: 'nope' }) },
      { api: 'db', action: 'createTransaction', params: () => ({}) },
      { api: 'db', action: 'insertRecords', params: () => ({ tableName: 'fza', sourceData: [{ name: 'InTx', code: fresh('T') }], transactionId }), guards: 'fza' },
      { api: 'db', action: 'getRecordsByTable', params: () => ({ tableName: 'fza', transactionId }) },
      { api: 'db', action: 'rollbackTransaction', params: () => ({ transactionId: 'not-a-transaction' }) },
    ];
    const batch = await runActionBatch('db', 707, templates, 3000, state);
    // the open transaction can still be rolled back (or already ended through a fuzzed call)
    const rolled = await action({ api: 'db', action: 'rollbackTransaction', authToken: state.token, params: { transactionId } });
    assert.ok([0, 4081].includes(rolled.json.errorCode), rolled.text);
    transactionId = undefined;
    batch.verdict('actions db');
  });

  it('HTTPS answers too after all of it', async () => {
    assert.ok(server.https);
    const reply = await send('GET', `${server.https}/engine/api/v1/record/main/sentinel/1`);
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.json.name, 'keep-1');
  });
});

// ------------------------------------------------------------------------------------- targeted regressions

describe('robustness: targeted regressions (passing properties)', function () {
  this.timeout(60_000);
  before(async () => {
    server = await startServer();
    B = `${server.http}/engine/api/v1`;
    await restOk('POST', '/table/main/t', { fields: [{ name: 'name', type: 'varchar', length: 48 }, { name: 'age', type: 'integer' }, { name: 'doc', type: 'json' }, { name: 'v', type: 'variant' }] });
    await restOk('POST', '/index/main/t/by_age', { fields: [{ name: 'age' }] });
    await restOk('POST', '/record/main/t', [{ name: 'Ann', age: 30 }, { name: 'Bob', age: 40 }]);
  });
  after(async () => { await server?.close(); });

  const expectError = async (method: string, path: string, body: string | Buffer | undefined, status: number, errorCode: number) => {
    const reply = await send(method, `${B}${path}`, { body });
    assert.equal(reply.status, status, reply.text);
    assert.equal(reply.json?.errorCode, errorCode, reply.text);
    assert.ok(typeof reply.json.errorMessage === 'string' && reply.json.errorMessage.length > 0);
  };

  it('json column nested 5,000 (and 100,000) deep → 400 4031, nothing stored', async () => {
    await expectError('POST', '/record/main/t', `{"doc": ${'['.repeat(5000)}${']'.repeat(5000)}}`, 400, 4031);
    await expectError('POST', '/record/main/t', `{"doc": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 400, 4031);
    assert.equal((await readAll('t')).length, 2);
  });
  it('filter nested 5,000 deep / 50,000 "!" → 400 4072; filter over 64 KiB → 400 12012', async () => {
    await expectError('POST', '/query/main/t/by_age?top=5', JSON.stringify({ find: { age: { operator: '>=', value: 0 } }, filter: `${'('.repeat(5000)}age > 1${')'.repeat(5000)}` }), 400, 4072);
    await expectError('POST', '/query/main/t/by_age?top=5', JSON.stringify({ find: { age: { operator: '>=', value: 0 } }, filter: `${'!'.repeat(50_000)}true` }), 400, 4072);
    await expectError('POST', '/query/main/t/by_age?top=5', JSON.stringify({ find: { age: { operator: '>=', value: 0 } }, filter: `name == "${LONG}"` }), 400, 12012);
  });
  it('boundary numbers: integer 2^31 → 4031; bigint 1e308 → 4031; real 1e309 → 4031', async () => {
    await expectError('POST', '/record/main/t', '{"age": 2147483648}', 400, 4031);
    await expectError('POST', '/record/main/t', '{"age": 1e309}', 400, 4031);
    await expectError('POST', '/query/main/t/by_age?top=5', '{"find": {"age": {"operator": ">=", "value": 1e308}}}', 400, 4031);
    await expectError('POST', '/query/main/t/by_age?top=1e308', '{"find": {"age": {"operator": ">=", "value": 1}}}', 400, 12012);
  });
  it('prototype-pollution keys are refused or ignored, and pollute nothing', async () => {
    await expectError('POST', '/record/main/t', '{"__proto__": {"isAdmin": true}}', 400, 12012); // valid JSON refused on purpose: 12012 names the key
    await expectError('POST', '/record/main/t', '{"constructor": {"prototype": {"isAdmin": true}}}', 400, 12012);
    await expectError('POST', '/table/main/tp', '{"fields": [{"name": "__proto__", "type": "integer"}]}', 400, 4026);
    const token = await login();
    const reply = await action({ api: 'db', action: 'insertRecords', authToken: token, params: JSON.parse('{"tableName": "t", "sourceData": [{"name": "P", "__proto__": {"isAdmin": true}}]}') });
    assert.equal(reply.status, 200);
    assert.ok(Number.isInteger(reply.json.errorCode) && reply.json.errorCode !== 12001, reply.text);
    assert.equal(({} as any).isAdmin, undefined, 'Object.prototype was polluted');
  });
  it('invalid UTF-8 bytes in a body never crash (REST and actions)', async () => {
    const reply = await send('POST', `${B}/record/main/t`, { body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d]) });
    assert.ok(reply.status < 500, reply.text);
    const viaAction = await send('POST', `${server.http}/api`, { auth: null, body: Buffer.from([0x7b, 0xff, 0x7d]) });
    assert.equal(viaAction.status, 400);
    assert.equal(viaAction.json.errorCode, 12009);
  });
  it('NUL in stored strings reads back as stored; a lone surrogate (not Unicode) is refused with 400', async () => {
    const created = await restOk('POST', '/record/main/t', JSON.parse('{"name": "a\\u0000b"}'));
    const back = await restOk('GET', `/record/main/t/${created._ids[0]}`);
    assert.equal(back.name, 'a\u0000b');
    await restOk('DELETE', `/record/main/t/${created._ids[0]}`);
    const refused = await send('POST', `${B}/record/main/t`, { body: '{"name": "a\\ud800"}' });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.errorCode, 4031);
  });
});

// ------------------------------------------------------------------------------------- fixed bugs

describe('robustness: fixed bugs (minimal reproductions kept as regression tests; titles say what used to go wrong)', function () {
  this.timeout(60_000);
  before(async () => {
    server = await startServer();
    B = `${server.http}/engine/api/v1`;
    await restOk('POST', '/table/main/t', { fields: [{ name: 'name', type: 'varchar', length: 48 }, { name: 'v', type: 'variant' }] });
    await restOk('POST', '/record/main/t', [{ name: 'Ann' }, { name: 'Bob' }]);
  });
  after(async () => { await server?.close(); });

  it('BUG-1a (fixed): REST POST /record with a variant value nested 5,000 deep answers 400/4031, not 500', async () => {
    const body = `{"v": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const reply = await send('POST', `${B}/record/main/t`, { body });
    // observed: 500 {"errorCode":12001,"errorMessage":"internal error: Maximum call stack size exceeded"}
    assert.equal(reply.status, 400, reply.text);
    assert.equal(reply.json.errorCode, 4031, reply.text);
    assert.equal((await readAll('t')).length, 2);
  });

  it('BUG-1b (fixed): REST PATCH/PUT with a variant value nested 5,000 deep answers 400, not 500', async () => {
    for (const method of ['PATCH', 'PUT']) {
      const reply = await send(method, `${B}/record/main/t/1`, { body: `{"v": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}` });
      assert.equal(reply.status, 400, `${method}: ${reply.text}`);
      assert.equal(reply.json.errorCode, 4031, `${method}: ${reply.text}`);
    }
    assert.deepEqual(await restOk('GET', '/record/main/t/1'), { name: 'Ann', v: null });
  });

  it('BUG-1c (fixed): action insertRecords with a variant value nested 5,000 deep answers a client error, not 12001', async () => {
    const token = await login();
    const body = `{"api": "db", "action": "insertRecords", "authToken": "${token}", "params": {"tableName": "t", "sourceData": [{"v": ${'['.repeat(5000)}${']'.repeat(5000)}}]}}`;
    const reply = await send('POST', `${server.http}/api`, { auth: null, body });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.json.errorCode, 4031, reply.text);
  });

  it('BUG-1d (fixed): a variant nested 3,000 deep is refused or read back, never 12001 (json columns stop at 512)', async () => {
    const created = await send('POST', `${B}/record/main/t`, { body: `{"name": "deep", "v": ${'['.repeat(3000)}${']'.repeat(3000)}}` });
    // observed: 200 {"_ids":[3]}; a json column would refuse this with 4031 "JSON value is nested too deeply"
    const token = await login();
    const reply = await action({ api: 'db', action: 'getRecordsByTable', authToken: token, params: { tableName: 't' }, responseOptions: { includePaths: ['v.a'] } });
    if (created.status === 200) await restOk('DELETE', `/record/main/t/${created.json._ids[0]}`);
    // observed: {"result":{},"errorCode":12001,"errorMessage":"internal error: Maximum call stack size exceeded"}
    assert.notEqual(reply.json.errorCode, 12001, `stored data cannot be read with includePaths: ${reply.text.slice(0, 200)}`);
    assert.equal(created.status, 400, `a variant nested 3,000 deep was accepted: ${created.text}`);
  });

  it('BUG-2a (fixed): a malformed percent-encoding in a REST path answers {errorCode, errorMessage}, not fastify\'s own body', async () => {
    const reply = await send('GET', `${B}/table/%E0%A4%A`);
    // observed: 400 {"error":"Bad Request","code":"FST_ERR_BAD_URL","message":"'/engine/api/v1/table/%E0%A4%A' is not a valid url component","statusCode":400}
    assert.equal(reply.status, 400, reply.text);
    assert.ok(Number.isInteger(reply.json?.errorCode), `no errorCode: ${reply.text}`);
    assert.ok(reply.json.errorMessage, reply.text);
  });

  it('BUG-2b (fixed): a table/index name longer than 100 characters in the path answers 414 with {errorCode, errorMessage}', async () => {
    const reply = await send('POST', `${B}/table/main/${'t'.repeat(200)}`, { body: '{"fields": [{"name": "a", "type": "integer"}]}' });
    // observed: 414 {"error":"Bad Request","code":"FST_ERR_MAX_PARAM_LENGTH","message":"'/engine/api/v1/table/main/ttt…' is not a valid url component","statusCode":414}
    assert.ok(Number.isInteger(reply.json?.errorCode), `no errorCode: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
    assert.ok(reply.json.errorMessage);
    assert.ok(reply.status === 400 || reply.status === 414);
  });

  it('BUG-2c (fixed): a URL over the header-size limit (70,000-character table name) answers 431 with {errorCode, errorMessage}', async () => {
    const reply = await send('GET', `${B}/index/main/${'t'.repeat(70_000)}`);
    // observed: 431 {"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size","statusCode":431}
    assert.ok(Number.isInteger(reply.json?.errorCode), `no errorCode: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
    assert.ok(reply.json.errorMessage);
  });

  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;

  it('BUG-4a (fixed): POST /api with a requestId nested 5,000 deep answers HTTP 200 with an envelope, not 500', async () => {
    const reply = await send('POST', `${server.http}/api`, { auth: null, body: `{"action": "pingSession", "requestId": ${deep}}` });
    // observed: 500 {"authToken":"","result":{},"errorCode":12001,"errorMessage":"internal error: Maximum call stack size exceeded"}
    // (requestId nested 4,000 deep is echoed fine)
    assert.equal(reply.status, 200, reply.text.slice(0, 200));
    assert.notEqual(reply.json.errorCode, 12001, reply.text.slice(0, 200));
  });

  it('BUG-4b (fixed): POST /api with debug "max" and a params value nested 5,000 deep answers an envelope, not 500', async () => {
    const reply = await send('POST', `${server.http}/api`, { auth: null, body: `{"action": "pingSession", "debug": "max", "params": {"x": ${deep}}}` });
    // observed: 500 {"authToken":"","result":{},"errorCode":12001,"errorMessage":"internal error: Maximum call stack size exceeded"}
    // (the same envelope without debug answers 200 / errorCode 0)
    assert.equal(reply.status, 200, reply.text.slice(0, 200));
    assert.notEqual(reply.json.errorCode, 12001, reply.text.slice(0, 200));
  });

  it('BUG-4c (fixed): an enum option (responseOptions.dataFormat, params.binaryFormat) nested 5,000 deep answers 12012, not 12001', async () => {
    const token = await login();
    const bodies = [
      `{"action": "pingSession", "responseOptions": {"dataFormat": ${deep}}}`,
      `{"api": "db", "action": "insertRecords", "authToken": "${token}", "params": {"tableName": "t", "sourceData": [{"name": "x"}], "binaryFormat": ${deep}}}`,
    ];
    const observed: string[] = [];
    for (const body of bodies) {
      const reply = await send('POST', `${server.http}/api`, { auth: null, body });
      // observed: 200 {"errorCode":12001,"errorMessage":"internal error: Maximum call stack size exceeded"}
      if (reply.status !== 200 || reply.json?.errorCode !== 12012) observed.push(`${body.slice(0, 90)}… → ${reply.status} ${reply.text.slice(0, 160)}`);
    }
    assert.deepEqual(observed, []);
    assert.equal((await readAll('t')).length, 2);
  });

  it('BUG-3: a record ID in hex or exponent form ("0x1", "1e0") is accepted as a number instead of 400/12012', async () => {
    // docs/rest.md: `{id}` must be a positive integer; anything else gets 400 (12012).
    const observed: string[] = [];
    for (const id of ['0x1', '1e0', '0b1', '0o1', ' 1']) {
      const reply = await send('GET', `${B}/record/main/t/${encodeURIComponent(id)}`);
      if (reply.status !== 400 || reply.json?.errorCode !== 12012) observed.push(`GET /record/main/t/${encodeURIComponent(id)} → ${reply.status} ${reply.text.slice(0, 80)}`);
    }
    assert.deepEqual(observed, []);
  });
});
