/**
 * plugins/cluster-nats/record-codec.ts: a stream record decodes alone, on any node, whichever
 * encoder wrote it, including records written by earlier versions (messages as msgpackr records,
 * or plain msgpack maps); appended messages travel in columns and come back equal.
 */
import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { decodeRecord, encodeRecord } from '../../plugins/cluster-nats/record-codec';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

const PAYLOADS = [
  (i: number) => ({ type: 'binary', value: Buffer.from([i & 0xff, 64, 127]) }),
  (i: number) => ({ type: 'string', value: `text ${i} ✓` }),
  (i: number) => ({ type: 'json', value: `{"n":${i}}` }),
  (i: number) => ({ type: 'boolean', value: i % 8 === 3 }),
];

function appendEntry(count: number, topicPrefix: string): OperationEntry {
  const messages = Array.from({ length: count }, (_, i) => ({
    topic: `${topicPrefix}/${i % 7}`,
    message: {
      createTs: `2026-11-27T04:00:0${i % 3}.123`, payload: PAYLOADS[i % 4](i), qos: i % 3, retain: i % 2 === 0,
      contentType: null, correlationData: i % 5 === 0 ? new Uint8Array([1, 2]) : null, responseTopic: null,
      expirySeconds: i % 4 === 0 ? 60 : null, userProperties: i % 6 === 0 ? [{ key: '__proto__', value: 'x' }] : null,
      payloadFormat: i % 9 === 0 ? 1 : null, publisher: i % 10 === 0 ? null : `client-${i % 3}`,
    },
  }));
  return { op: 'messages.append', messages } as unknown as OperationEntry;
}

const otherEntries = (): OperationEntry[] => [
  { op: 'state.put', key: 'session:a', value: { expiry: 10n ** 20n, subscriptions: [{ filter: 'a/#', qos: 1 }], missing: undefined } },
  { op: 'records.insert', database: 'db', table: 't', rows: [{ name: 'o\'brien "x"', n: 64, nested: { constructor: 1, '': 2 } }] } as unknown as OperationEntry,
];

describe('cluster-nats stream record codec', () => {
  it('entries of one shape and of many shapes come back equal, with bytes, big integers and undefined kept', () => {
    const entries = [appendEntry(100, 'a'), ...otherEntries()];
    assert.deepEqual(decodeRecord(encodeRecord(entries)), entries);
  });

  it('appended messages travel in columns: each topic, timestamp and publisher once per record, and fewer bytes than as msgpackr records', () => {
    const entries = [appendEntry(100, 'a/long/topic/name/of/some/length')];
    const bytes = encodeRecord(entries);
    const text = Buffer.from(bytes).toString('latin1');
    assert.equal(text.split('a/long/topic/name/of/some/length/3').length - 1, 1);
    assert.equal(text.split('2026-11-27T04:00:01.123').length - 1, 1);
    assert.equal(text.split('client-2').length - 1, 1);
    const asRecords = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true }).pack(entries);
    assert.ok(bytes.length < asRecords.length * 0.8, `${bytes.length} bytes in columns, ${asRecords.length} as records`);
  });

  it('a message of another shape (a payload that is not a variant value) comes back as it was, between messages in columns', () => {
    const entry = appendEntry(6, 'mixed') as unknown as { messages: Array<{ message: { payload: unknown; qos: unknown } }> };
    entry.messages[2].message.payload = Buffer.from([1, 2, 3]);
    entry.messages[4].message.qos = 7;
    const entries = [entry as unknown as OperationEntry];
    assert.deepEqual(decodeRecord(encodeRecord(entries)), entries);
  });

  it('a record with messages as msgpackr records (by a node of the previous version) decodes to the same entries', () => {
    const entries = [appendEntry(40, 'records'), ...otherEntries()];
    const previous = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });
    assert.deepEqual(decodeRecord(previous.pack(entries)), entries);
  });

  it('a record written with plain maps (by a node of an earlier version) decodes to the same entries', () => {
    const entries = [appendEntry(20, 'plain'), ...otherEntries()];
    const earlier = new Packr({ useRecords: false, moreTypes: true });
    assert.deepEqual(decodeRecord(earlier.pack(entries)), entries);
  });

  it('a record decodes alone: a node that never saw the writer\'s earlier records reads its later ones', () => {
    // The writer's encoder has written records before; a fresh decoder (another node, a restart)
    // reads only the latest: no record structure may be carried from one record to the next.
    const writer = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });
    writer.pack([appendEntry(50, 'first')]);
    const later = [appendEntry(30, 'later'), ...otherEntries()];
    assert.deepEqual(decodeRecord(writer.pack(later)), later);
    // And this module's encoder, after many records, writes records another decoder reads alone.
    for (let i = 0; i < 3; i++) encodeRecord([appendEntry(10, `warm${i}`)]);
    // (What a fresh reader reads, in plain maps again, is the same columns decodeRecord turns back.)
    const reader = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });
    const plain = new Packr({ useRecords: false, moreTypes: true });
    assert.deepEqual(decodeRecord(plain.pack(reader.unpack(encodeRecord(later)))), later);
  });

  it('something other than an array of entries is refused', () => {
    assert.throws(() => decodeRecord(new Packr().pack({ op: 'state.put' })), /array of operation entries/);
  });
});
