/**
 * The store's integrity check (`engine check <folder>`, docs/operations.md "Backups and restores"):
 * - every index of every table holds exactly one entry per record, the key its values encode to;
 * - every topic's index (chunks and what the open indexed past the watermark) names only messages
 *   of that topic in the log, ascending, and every message of a live topic in the log is in it.
 * Messages of a topic deleted and not yet purged are counted, not an error (the purge is pending).
 * It reads one snapshot at a time per table or topic: run it on a copy or a stopped server's folder.
 */
import type { IntegrityReport } from '../../kernel/storage/storage-port';
import type { Catalog, TableState } from './catalog';
import { appendRecordId, encodeIndexKey } from './index-keys';
import type { LogReads } from './log-reads';
import { decodeRow } from './records';
import type { TopicIndex } from './topic-index';

/** Stop listing problems past this many (the counts go on). */
const MAX_LISTED = 50;

export function checkIntegrity(catalog: Catalog, reads: LogReads, topicIndex: TopicIndex): IntegrityReport {
  const problems: string[] = [];
  const problem = (text: string): void => { if (problems.length < MAX_LISTED) problems.push(text); else problems.length = MAX_LISTED; };
  let records = 0;
  let indexEntries = 0;
  const tables = catalog.allTables();
  for (const ts of tables) {
    const counted = checkTable(ts, problem);
    records += counted.records;
    indexEntries += counted.indexEntries;
  }
  const log = checkLog(catalog, reads, topicIndex, problem);
  return {
    ok: problems.length === 0,
    problems,
    tables: tables.length,
    records,
    indexEntries,
    topics: catalog.topicsById.size,
    messages: log.messages,
    unpurgedMessages: log.unpurged,
  };
}

function checkTable(ts: TableState, problem: (text: string) => void): { records: number; indexEntries: number } {
  const name = `${ts.def.database}.${ts.def.name}`;
  let records = 0;
  const found = new Array<number>(ts.indexes.length).fill(0);
  for (const { key, value } of ts.records.getRange({})) {
    records++;
    const id = key as number;
    let row;
    try {
      row = decodeRow(ts, id, value as unknown[]);
    } catch (error) {
      problem(`${name}: record ${id} cannot be decoded: ${(error as Error).message}`);
      continue;
    }
    for (let x = 0; x < ts.indexes.length; x++) {
      const index = ts.indexes[x];
      let expected: Buffer;
      try {
        expected = appendRecordId(encodeIndexKey(index.specs, row), id);
      } catch (error) {
        problem(`${name}: record ${id} has no key in index ${index.def.name}: ${(error as Error).message}`);
        continue;
      }
      if (index.db.doesExist(expected)) found[x]++;
      else problem(`${name}: index ${index.def.name} lacks the entry of record ${id}`);
    }
  }
  let indexEntries = 0;
  for (let x = 0; x < ts.indexes.length; x++) {
    const index = ts.indexes[x];
    const entries = index.db.getKeysCount({});
    indexEntries += entries;
    if (entries !== found[x]) {
      problem(`${name}: index ${index.def.name} holds ${entries} entries for ${records} records (${found[x]} match a record)`);
    }
  }
  return { records, indexEntries };
}

function checkLog(catalog: Catalog, reads: LogReads, topicIndex: TopicIndex, problem: (text: string) => void): { messages: number; unpurged: number } {
  const inLog = new Map<number, number>();
  let messages = 0;
  let unpurged = 0;
  let previous = 0;
  for (const block of reads.blocksFrom(1)) {
    for (let i = 0; i < block.count; i++) {
      const seq = block.seqs[i];
      if (seq <= previous) problem(`log: sequence ${seq} follows ${previous}`);
      previous = seq;
      const topicId = block.topicIds[i];
      if (catalog.topicsById.has(topicId)) {
        messages++;
        inLog.set(topicId, (inLog.get(topicId) ?? 0) + 1);
      } else {
        unpurged++;
      }
    }
  }
  for (const [topicId, info] of catalog.topicsById) {
    let indexed = 0;
    let last = 0;
    for (const seq of topicIndex.sequences(topicId)) {
      indexed++;
      if (seq <= last) problem(`topic "${info.topic}": its index lists ${seq} after ${last}`);
      last = seq;
      if (reads.valuesOf(topicId, seq) === undefined) problem(`topic "${info.topic}": its index lists message ${seq}, which the log does not hold for it`);
    }
    const logged = inLog.get(topicId) ?? 0;
    if (indexed !== logged) problem(`topic "${info.topic}": its index lists ${indexed} messages, the log holds ${logged}`);
  }
  return { messages, unpurged };
}
