/** getMessagesFromMqTopic / mq.retrieve through POST /api against a real data folder. */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';
import { admin, fails, login, ok } from '../actions/action-client';
import type { MessageInput } from '../../kernel/storage/storage-port';
import type { VariantValue } from '../../kernel/storage/types';
import type { CommandContext } from '../../kernel/bus/command';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

function ts(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

function message(createMs: number, payload: VariantValue, extra: Partial<MessageInput> = {}): MessageInput {
  return {
    createTs: ts(createMs), payload, qos: 0, retain: false, contentType: null, correlationData: null, responseTopic: null,
    expirySeconds: null, userProperties: null, payloadFormat: null, publisher: null, ...extra,
  };
}

function json(value: unknown): VariantValue {
  return { type: 'json', value: JSON.stringify(value) };
}

function mq(action: string, authToken: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'mq', action, params, authToken, ...extra };
}

describe('getMessagesFromMqTopic (mq.retrieve)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let clock: ManualClock;
  let root: string;

  async function append(topic: string, messages: MessageInput[]): Promise<number[]> {
    return server.engine.need('storage').messageLog.append(messages.map((m) => ({ topic, message: m })));
  }

  before(async function () {
    clock = new ManualClock(T0 + 2 * 86_400_000); // after every createTs the tests write
    server = await startServer({ plugins: ['storage-lmdb', 'data', 'messaging', 'http', 'actions'] }, { clock });
    root = await login(server);
    // a/b: ten json messages one minute apart
    await append('a/b', Array.from({ length: 10 }, (_, i) => message(T0 + i * 60_000, json({ n: i }))));
  });

  after(async function () {
    await server?.close();
  });

  async function read(params: Record<string, unknown>): Promise<any[]> {
    const result = await ok(server, mq('getMessagesFromMqTopic', root, { includeMessageMetadata: true, ...params }));
    return result.messages;
  }

  it('startFrom tail (default), head, a message id, an ISO date-time; maxMessages', async function () {
    const tail = await read({ topic: 'a/b', maxMessages: 3 });
    assert.deepEqual(tail.map((m) => m.payload.n), [7, 8, 9]);
    assert.deepEqual((await read({ topic: 'a/b' })).map((m) => m.payload.n), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual((await read({ topic: 'a/b', startFrom: 'tail', maxMessages: 1 })).map((m) => m.payload.n), [9]);
    const head = await read({ topic: 'a/b', startFrom: 'head', maxMessages: 4 });
    assert.deepEqual(head.map((m) => m.payload.n), [0, 1, 2, 3]);
    assert.ok(head.every((m, i) => i === 0 || m.id > head[i - 1].id));
    assert.equal(head[0].timestamp, ts(T0));
    assert.equal(head[0].error, false);
    assert.equal(head[0].log, null);
    const fromId = await read({ topic: 'a/b', startFrom: head[2].id, maxMessages: 2 });
    assert.deepEqual(fromId.map((m) => m.payload.n), [2, 3]);
    assert.deepEqual((await read({ topic: 'a/b', startFrom: String(head[2].id), maxMessages: 1 })).map((m) => m.payload.n), [2]);
    // an ISO date-time: on or after it; with an offset; a date alone is midnight
    assert.deepEqual((await read({ topic: 'a/b', startFrom: '2026-01-10T12:05:00Z', maxMessages: 100 })).map((m) => m.payload.n), [5, 6, 7, 8, 9]);
    assert.deepEqual((await read({ topic: 'a/b', startFrom: '2026-01-10T12:04:30.5Z' })).map((m) => m.payload.n), [5, 6, 7, 8, 9]);
    assert.deepEqual((await read({ topic: 'a/b', startFrom: '2026-01-10T14:08:00+02:00' })).map((m) => m.payload.n), [8, 9]);
    assert.equal((await read({ topic: 'a/b', startFrom: '2026-01-10' })).length, 10);
    assert.equal((await read({ topic: 'a/b', startFrom: '2026-01-11' })).length, 0);
    // without metadata: no id
    const plain = await ok(server, mq('getMessagesFromMqTopic', root, { topic: 'a/b', maxMessages: 1 }));
    assert.deepEqual(plain.messages, [{ payload: { n: 9 } }]);
  });

  it('an ISO date-time start over a long topic interleaved with other topics (binary search)', async function () {
    const T1 = T0 + 86_400_000; // later than every message before it (create_ts never goes back along the log)
    const appends: Array<{ topic: string; message: MessageInput }> = [];
    for (let i = 0; i < 1000; i++) {
      appends.push({ topic: 'dated', message: message(T1 + i * 1000, json(i)) });
      for (let k = 0; k < i % 3; k++) appends.push({ topic: 'noise', message: message(T1 + i * 1000, json('n')) });
    }
    await server.engine.need('storage').messageLog.append(appends);
    for (const second of [0, 1, 2, 377, 500, 998, 999]) {
      const page = await read({ topic: 'dated', startFrom: `${ts(T1 + second * 1000 - 500)}Z`, maxMessages: 2 });
      assert.deepEqual(page.map((m) => m.payload), [second, second + 1].filter((n) => n < 1000), `second ${second}`);
    }
    assert.deepEqual(await read({ topic: 'dated', startFrom: `${ts(T1 + 1_000_000)}Z` }), []);
  });

  it('is stateless: reading twice returns the same messages', async function () {
    const first = await read({ topic: 'a/b', startFrom: 'head' });
    const second = await read({ topic: 'a/b', startFrom: 'head' });
    assert.deepEqual(first, second);
    assert.equal(server.engine.need('storage').messageLog.countTopic('a/b'), 10);
  });

  it('paging by last id + 1 over 2,500 messages returns each exactly once (other topics interleaved)', async function () {
    const ids: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const appends: Array<{ topic: string; message: MessageInput }> = [];
      for (let i = 0; i < 500; i++) {
        appends.push({ topic: 'paging', message: message(T0, json(batch * 500 + i)) });
        if (i % 7 === 0) appends.push({ topic: 'other', message: message(T0, json('x')) });
      }
      const seqs = await server.engine.need('storage').messageLog.append(appends);
      ids.push(...seqs.filter((_, k) => appends[k].topic === 'paging'));
    }
    const seen: number[] = [];
    const values: number[] = [];
    let startFrom: unknown = 'head';
    let pages = 0;
    for (;;) {
      const page = await read({ topic: 'paging', startFrom, maxMessages: 300 });
      if (page.length === 0) break;
      pages++;
      assert.ok(page.length <= 300);
      for (const m of page) { seen.push(m.id); values.push(m.payload); }
      startFrom = page[page.length - 1].id + 1;
    }
    assert.equal(pages, 9);
    assert.deepEqual(seen, ids);
    assert.deepEqual(values, Array.from({ length: 2500 }, (_, i) => i));
  });

  it('payload kinds (json value, utf8 string, binary) and binaryFormat', async function () {
    await append('kinds', [
      message(T0, json({ a: [1, 'x'] })),
      message(T0, { type: 'string', value: 'héllo' }, { payloadFormat: 1 }),
      message(T0, { type: 'binary', value: Uint8Array.from([0, 1, 254, 255]) }),
      message(T0, json('a string')),
    ]);
    const hex = await read({ topic: 'kinds', startFrom: 'head' });
    assert.deepEqual(hex.map((m) => m.payload), [{ a: [1, 'x'] }, 'héllo', '0001FEFF', 'a string']);
    assert.equal(hex[2].binaryFormat, 'hex');
    assert.equal(hex[0].binaryFormat, undefined);
    assert.equal((await read({ topic: 'kinds', startFrom: 'head', binaryFormat: 'base64' }))[2].payload, 'AAH+/w==');
    assert.deepEqual((await read({ topic: 'kinds', startFrom: 'head', binaryFormat: 'byteArray' }))[2].payload, [0, 1, 254, 255]);
    // responseOptions.binaryFormat applies when params do not say
    const viaOptions = await ok(server, mq('getMessagesFromMqTopic', root, { topic: 'kinds', startFrom: 'head' }, { responseOptions: { binaryFormat: 'base64' } }));
    assert.equal(viaOptions.messages[2].payload, 'AAH+/w==');
    await fails(server, mq('getMessagesFromMqTopic', root, { topic: 'kinds', binaryFormat: 'json' }), 12012);
  });

  it('includeMqttProperties and includeOtherFields', async function () {
    await append('props', [message(T0, json(1), {
      qos: 1, retain: true, contentType: 'application/json', correlationData: Uint8Array.from([0xab]), responseTopic: 'r/t',
      expirySeconds: 999_999, userProperties: [{ key: 'k', value: 'v' }], payloadFormat: 1, publisher: 'client-1',
    })]);
    const [m] = await read({ topic: 'props', includeMqttProperties: true, includeOtherFields: true, includeTransformFields: true });
    assert.equal(m.qos, 1);
    assert.equal(m.retain, true);
    assert.equal(m.contentType, 'application/json');
    assert.equal(m.correlationData, 'AB');
    assert.equal(m.responseTopic, 'r/t');
    assert.equal(m.expirySeconds, 999_999);
    assert.deepEqual(m.userProperties, [{ key: 'k', value: 'v' }]);
    assert.equal(m.payloadFormatIndicator, 1);
    assert.equal(m.publisher, 'client-1');
    assert.equal(m.topic, 'props');
    assert.equal(m.messageHasExpired, undefined);
    const [bare] = await read({ topic: 'props' });
    assert.equal(bare.qos, undefined);
    assert.equal(bare.topic, undefined);
  });

  it('expiry: messageHasExpired, expiredMessagesFilter, includeExpiredMessages (engine clock)', async function () {
    const now = clock.now();
    // created now: expires in 10 s, in 100 s, never
    await append('exp', [
      message(now, json('ten'), { expirySeconds: 10 }),
      message(now, json('hundred'), { expirySeconds: 100 }),
      message(now, json('never')),
    ]);
    const payloads = async (params: Record<string, unknown>): Promise<unknown[]> => (await read({ topic: 'exp', ...params })).map((m) => [m.payload, m.messageHasExpired ?? false]);
    assert.deepEqual(await payloads({}), [['ten', false], ['hundred', false], ['never', false]]);
    clock.advanceSeconds(10);
    assert.deepEqual(await payloads({}), [['ten', true], ['hundred', false], ['never', false]]);
    assert.deepEqual(await payloads({ expiredMessagesFilter: 'exclude' }), [['hundred', false], ['never', false]]);
    assert.deepEqual(await payloads({ expiredMessagesFilter: 'only' }), [['ten', true]]);
    assert.deepEqual(await payloads({ includeExpiredMessages: false }), [['hundred', false], ['never', false]]);
    clock.advanceSeconds(1000);
    assert.deepEqual(await payloads({ expiredMessagesFilter: 'only', startFrom: 'head' }), [['ten', true], ['hundred', true]]);
    assert.deepEqual(await payloads({ expiredMessagesFilter: 'exclude', maxMessages: 1 }), [['never', false]]);
    assert.deepEqual(await payloads({ expiredMessagesFilter: 'only', maxMessages: 1 }), [['hundred', true]]);
    await fails(server, mq('getMessagesFromMqTopic', root, { topic: 'exp', expiredMessagesFilter: 'only', includeExpiredMessages: false }), 12012);
    await fails(server, mq('getMessagesFromMqTopic', root, { topic: 'exp', expiredMessagesFilter: 'some' }), 12012);
    // nothing was removed
    assert.equal(server.engine.need('storage').messageLog.countTopic('exp'), 3);
  });

  it('tableName (the integration table) instead of topic', async function () {
    const table = server.engine.need('storage').messageLog.getTopic('a/b')!.table;
    assert.equal(table, 'mqtt_msg_a_b');
    const byTable = await read({ tableName: table, startFrom: 'head' });
    const byTopic = await read({ topic: 'a/b', startFrom: 'head' });
    assert.deepEqual(byTable, byTopic);
    assert.equal((await read({ tableName: 'MQTT_MSG_A_B', databaseName: 'main', maxMessages: 2 })).length, 2);
    await fails(server, mq('getMessagesFromMqTopic', root, { tableName: 'no_such_table' }), 4023);
    await ok(server, { api: 'db', action: 'createTable', authToken: root, params: { tableName: 'plain_table', fields: [{ name: 'a', type: 'integer' }] } });
    const plain = await fails(server, mq('getMessagesFromMqTopic', root, { tableName: 'plain_table' }), 12012);
    assert.match(plain.errorMessage, /not an integration table/);
  });

  it('mq.retrieve itself refuses both or neither of topic and table', async function () {
    const ctx: CommandContext = { principal: SYSTEM_PRINCIPAL, origin: 'internal' };
    await assert.rejects(server.engine.bus.execute('mq.retrieve', { topic: 'a/b', table: 'mqtt_msg_a_b' }, ctx), /exactly one/);
    await assert.rejects(server.engine.bus.execute('mq.retrieve', {}, ctx), /exactly one/);
  });

  it('bad params and unknown topics', async function () {
    const bad = (params: Record<string, unknown>, code: number): Promise<any> => fails(server, mq('getMessagesFromMqTopic', root, params), code);
    await bad({}, 12025); // neither topic nor tableName
    await bad({ topic: '' }, 12025);
    await bad({ topic: 'a/b', tableName: 'mqtt_msg_a_b' }, 12012);
    await bad({ topic: 'a/b', databaseName: '' }, 12012);
    await bad({ topic: 'a/b', ownerName: '' }, 12012);
    await bad({ topic: 'a/b', databaseName: 'x'.repeat(65) }, 12012);
    await bad({ tableName: 'x'.repeat(65) }, 12012);
    await bad({ topic: 'a/b', maxMessages: 0 }, 12012);
    await bad({ topic: 'a/b', maxMessages: 100_001 }, 12012);
    await bad({ topic: 'a/b', maxMessages: 'ten' }, 12012);
    await bad({ topic: 'a/b', startFrom: 'currentPosition' }, 12012);
    await bad({ topic: 'a/b', startFrom: '2026-13-40' }, 12012);
    await bad({ topic: 'a/b', startFrom: -1 }, 12012);
    await bad({ topic: 'a/#' }, 14243);
    await bad({ topic: 'a/+/c' }, 14243);
    await bad({ topic: 'x'.repeat(65_501) }, 12012);
    const unknown = await bad({ topic: 'never/published' }, 14244);
    assert.match(unknown.errorMessage, /never\/published/);
    // maxMessages at the limit is accepted
    assert.equal((await read({ topic: 'a/b', maxMessages: 100_000 })).length, 10);
  });

  it('authorization: a role denied mq.retrieve on the topic gets 12030; reader may read', async function () {
    await append('secret/x', [message(T0, json('hidden'))]);
    await ok(server, admin('createRole', root, {
      roleName: 'nosecret',
      grants: [{ commands: ['*'], resources: ['*'] }],
      denies: [{ commands: ['mq.retrieve'], resources: ['topic:secret/#'] }],
    }));
    await ok(server, admin('createAccount', root, { username: 'eve', password: 'pw-eve' }));
    await ok(server, admin('assignRolesToAccounts', root, { usernames: ['eve'], roleNames: ['nosecret'] }));
    const eve = await login(server, 'eve', 'pw-eve');
    await fails(server, mq('getMessagesFromMqTopic', eve, { topic: 'secret/x' }), 12030);
    const table = server.engine.need('storage').messageLog.getTopic('secret/x')!.table;
    await fails(server, mq('getMessagesFromMqTopic', eve, { tableName: table }), 12030);
    assert.equal((await ok(server, mq('getMessagesFromMqTopic', eve, { topic: 'a/b' }))).messages.length, 10);

    await ok(server, admin('createAccount', root, { username: 'rita', password: 'pw-rita' }));
    await ok(server, admin('assignRolesToAccounts', root, { usernames: ['rita'], roleNames: ['reader'] }));
    const rita = await login(server, 'rita', 'pw-rita');
    assert.equal((await ok(server, mq('getMessagesFromMqTopic', rita, { topic: 'secret/x' }))).messages[0].payload, 'hidden');
    await fails(server, mq('getMessagesFromMqTopic', 'not-a-token', { topic: 'a/b' }), 12031);
  });

  it('by tableName, someone who may not read tables learns nothing of one that does not exist', async function () {
    await ok(server, admin('createRole', root, { roleName: 'topics_only', grants: [{ commands: ['mq.retrieve'], resources: ['topic:a/#'] }] }));
    await ok(server, admin('createAccount', root, { username: 'tim', password: 'pw-tim', roles: ['topics_only'] }));
    const tim = await login(server, 'tim', 'pw-tim');
    await fails(server, mq('getMessagesFromMqTopic', tim, { tableName: 'no_such_table' }), 12030);
    const table = server.engine.need('storage').messageLog.getTopic('a/b')!.table;
    assert.equal((await ok(server, mq('getMessagesFromMqTopic', tim, { tableName: table }))).messages.length, 10);
    await fails(server, mq('getMessagesFromMqTopic', root, { tableName: 'no_such_table' }), 4023);
  });
});
