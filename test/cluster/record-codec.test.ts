/**
 * plugins/cluster-nats/record-codec.ts: a stream record decodes alone, on any node, whichever
 * encoder wrote it, including records written as plain msgpack maps by earlier versions.
 */
import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { decodeRecord, encodeRecord } from '../../plugins/cluster-nats/record-codec';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

function appendEntry(count: number, topicPrefix: string): OperationEntry {
  const messages = Array.from({ length: count }, (_, i) => ({
    topic: `${topicPrefix}/${i % 7}`,
    message: {
      createTs: '2026-11-27T04:00:00.123456Z', payload: Buffer.from([i & 0xff, 64, 127]), qos: i % 3, retain: i % 2 === 0,
      contentType: null, correlationData: i % 5 === 0 ? new Uint8Array([1, 2]) : null, responseTopic: null,
      expirySeconds: i % 4 === 0 ? 60 : null, userProperties: i % 6 === 0 ? [{ key: '__proto__', value: 'x' }] : null,
      payloadFormat: null, publisher: `client-${i % 3}`,
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
    const reader = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });
    assert.deepEqual(reader.unpack(encodeRecord(later)), later);
  });

  it('something other than an array of entries is refused', () => {
    assert.throws(() => decodeRecord(new Packr().pack({ op: 'state.put' })), /array of operation entries/);
  });
});
