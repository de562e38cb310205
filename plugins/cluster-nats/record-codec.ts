/**
 * A stream record: the operation entries of one node's turn of writes, msgpack-encoded as an
 * array. msgpack keeps what entries carry (bytes, big integers, `undefined` for a value not
 * supplied); test/storage/replay.test.ts applies entries encoded this way and gets the same store.
 */
import { Packr } from 'msgpackr';
import type { OperationEntry } from '../../kernel/storage/operation-entries';

const packr = new Packr({ useRecords: false, moreTypes: true });

export function encodeRecord(entries: readonly OperationEntry[]): Uint8Array {
  return packr.pack(entries);
}

export function decodeRecord(bytes: Uint8Array): OperationEntry[] {
  const entries = packr.unpack(bytes) as unknown;
  if (!Array.isArray(entries)) throw new Error('a stream record holds an array of operation entries');
  return entries as OperationEntry[];
}
