/**
 * The message log on LMDB (kernel/storage/message-log-port.ts, docs/storage.md "The message log").
 *
 * - `log:blocks` key = the first sequence of a block, value = the messages of one append, in
 *                sequence order (log-blocks.ts): a turn of publishes costs one put
 * - `log:chunks` the per-topic index (topic-index.ts), written behind the log in bulk
 * - `log:state`  the message core's state, committed with the appends (log-state.ts)
 * - catalog      ['topic', topic] → LogTopic; ['topic-id'] → next topic id, written with each new
 *                topic; ['log-seq'] → next sequence, written with each topic delete or trim
 *                (otherwise the last block's last sequence + 1 is the next: the counter lives in
 *                memory); ['log-indexed'] → the index's watermark.
 *
 * No named database per topic: a topic is a catalog entry and a key range of `log:chunks`.
 * Its integration table is a view (a TableState whose records and `create_ts_idx` index are
 * adapters over the log and its index), synthesized on first access and cached.
 */
import type { Database } from 'lmdb';
import { EngineError } from '../../kernel/errors';
import type {
  LogAppend, LogFollower, LoggedMessage, LogTopic, MessageLogPort, TopicReadOptions,
} from '../../kernel/storage/message-log-port';
import type { MessageInput } from '../../kernel/storage/storage-port';
import type { IndexDefinition, Row, TableDefinition } from '../../kernel/storage/types';
import { appendRecordId, encodeIndexKey, keyLength, resolveKeySegments, type KeySegmentSpec } from '../data/index-keys';
import { columnPositions, freezeDefinition, type Catalog, type IndexState, type TableState } from './catalog';
import type { IndexDb, LmdbEnvironment, RecordsDb } from './environment';
import { LmdbLogState } from './log-state';
import {
  BLOCK_MAX_ENTRIES, BLOCK_TARGET_BYTES, encodeBlock, inputOf, ScannedBlock, type BlockEntry, type StoredValues,
} from './log-blocks';
import { migrateLegacyLog } from './log-migration';
import { CHUNK_DB, TopicIndex, type SequenceRange } from './topic-index';
import { checkTopic, CREATE_TS_INDEX, TOPIC_COLUMNS, topicTableName } from './integration-tables';
import type { LmdbSchema } from './schema';

type BlockDb = Database<Buffer, number>;

export const LOG_DB = 'log:blocks';
export const LOG_INDEX_DB = CHUNK_DB;
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** Integration-table views kept built; beyond it the oldest is forgotten (rebuilt on next use). */
const MAX_CACHED_VIEWS = 10_000;
/** Scanned blocks kept for readers walking the log or a topic. */
const MAX_CACHED_BLOCKS = 16;

/** Messages a deleted topic's purge (or a trim) removes per commit (a few milliseconds each). */
const PURGE_CHUNK = 2000;

const CANONICAL_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;

function invalidMessage(reason: string): EngineError {
  return new EngineError('INVALID_PARAMETER', { param: 'messages', reason });
}

/** The last create_ts found canonical: the messages of a turn share one. */
let checkedCreateTs = '';

function checkMessage(message: MessageInput): void {
  if (message === null || typeof message !== 'object') throw invalidMessage('a message is an object');
  // create_ts never goes back along the log (compared as text), so one bad value would stick.
  if (message.createTs !== checkedCreateTs) {
    if (typeof message.createTs !== 'string' || !CANONICAL_TIMESTAMP.test(message.createTs)) {
      throw invalidMessage('createTs must be a canonical timestamp (YYYY-MM-DDThh:mm:ss.sss)');
    }
    checkedCreateTs = message.createTs;
  }
  if (message.qos !== undefined && message.qos !== 0 && message.qos !== 1 && message.qos !== 2) throw invalidMessage('qos is 0, 1 or 2');
  const payload = message.payload;
  if (payload === null || typeof payload !== 'object' || typeof payload.type !== 'string') {
    throw invalidMessage('payload must be a variant value');
  }
  const value = (payload as { value: unknown }).value;
  const valid = payload.type === 'binary' ? value instanceof Uint8Array
    : payload.type === 'boolean' ? typeof value === 'boolean'
      : (payload.type === 'json' || payload.type === 'string') && typeof value === 'string';
  if (!valid) throw invalidMessage('payload must be a variant value');
  if (message.publisher !== undefined && message.publisher !== null && typeof message.publisher !== 'string') {
    throw invalidMessage('publisher is a string');
  }
}

/** A stored log value as the integration table's positional values (columns after `id`). */
function rowValues(v: unknown[]): unknown[] {
  return [v[1], v[2], false, null, v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]];
}

/** Entries to append, checked: the appends kept and their block entries, in order. */
interface CheckedAppend {
  appends: LogAppend[];
  entries: BlockEntry[];
  /** Every topic exists and is durable: plain puts (else a transaction creates the new ones). */
  known: boolean;
}

function seqsOf(entries: BlockEntry[]): number[] {
  const seqs = new Array<number>(entries.length);
  for (let i = 0; i < entries.length; i++) seqs[i] = entries[i].seq;
  return seqs;
}

/** A message's size as far as closing a block goes (text counted in UTF-16 units: an estimate is enough). */
function payloadSize(m: MessageInput): number {
  const p = m.payload;
  return p.type === 'binary' ? p.value.byteLength : p.type === 'boolean' ? 0 : p.value.length;
}

export class LmdbMessageLog implements MessageLogPort {
  readonly log: BlockDb;
  readonly topicIndex: TopicIndex;
  readonly state: LmdbLogState;
  private nextSeq = 1;
  private nextTopicId = 1;
  /** The create_ts of the last appended message: create_ts never goes back along the log. */
  private lastCreateTs = '';
  private readonly views = new Map<number, TableState>();
  /** Scanned blocks by key, least recently used first. */
  private readonly blocks = new Map<number, ScannedBlock>();
  /** Topics the running atomic write created (forgotten again if it fails). */
  private createdInTxn: LogTopic[] | undefined;
  /** Topics created by a write not yet durable: ensureTopic answers with that write's outcome. */
  private readonly pendingTopics = new Map<string, Promise<LogTopic>>();
  /** The last sequence whose commit is durable (lastSequence): never one a crash could hand out again. */
  private durableSeq = 0;
  /**
   * The last append's answer: each append is answered after the one called before it, so
   * `durableSeq` never passes an append still in flight (the index's watermark follows it).
   */
  private previousAppend: Promise<unknown> = Promise.resolve();
  /** Listeners told of each durable append (follow). */
  private readonly followers = new Set<LogFollower>();
  /** Purges of deleted topics' messages, one after another. */
  private purging: Promise<void> = Promise.resolve();
  /** Retention trims, one after another. */
  private trimming: Promise<number> = Promise.resolve(0);
  private closing = false;
  private viewDefinitionTemplate: TableDefinition | null = null;
  private createTsSpecs: KeySegmentSpec[] | null = null;
  private viewColumnPos: Map<string, number> | null = null;

  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    private readonly schema: LmdbSchema,
    private readonly defaultDatabase: string,
  ) {
    this.log = env.root.openDB<Buffer, number>(LOG_DB, { encoding: 'binary' }) as BlockDb;
    this.topicIndex = new TopicIndex(env, () => this.durableSeq);
    this.state = new LmdbLogState(env);
    catalog.views = {
      table: (info) => this.view(info),
      drop: (ts) => this.dropInTxn(ts),
    };
  }

  /** After the catalog is loaded: the counters, and the index of what the last run left unindexed. */
  load(): void {
    migrateLegacyLog(this.env, (key, block) => { void this.log.put(key, block); });
    this.nextSeq = Math.max(1, (this.env.catalog.get(['log-seq']) as number | undefined) ?? 1);
    for (const { key, value } of this.log.getRange({ reverse: true, limit: 1 })) {
      const block = new ScannedBlock(key as number, value as Buffer);
      this.nextSeq = Math.max(this.nextSeq, block.lastSeq + 1);
      this.lastCreateTs = block.createTsOf(block.count - 1);
    }
    this.durableSeq = this.nextSeq - 1;
    let topicId = (this.env.catalog.get(['topic-id']) as number | undefined) ?? 1;
    for (const id of this.catalog.topicsById.keys()) if (id >= topicId) topicId = id + 1;
    this.nextTopicId = topicId;
    const indexed = this.topicIndex.watermark();
    // A topic whose purge is pending is indexed too: its purge finds its messages through the index.
    const purging = new Set(this.catalog.purgesPending);
    for (const block of this.blocksFrom(indexed + 1)) {
      for (let i = block.firstAtOrAfter(indexed + 1); i < block.count; i++) {
        const topicId = block.topicIds[i];
        if (this.catalog.topicsById.has(topicId) || purging.has(topicId)) this.topicIndex.add(topicId, block.seqs[i]);
      }
    }
    for (const topicId of this.catalog.purgesPending) void this.purge(topicId);
  }

  // ---- blocks --------------------------------------------------------------------------------

  private scanned(key: number, bytes: Buffer): ScannedBlock {
    const block = new ScannedBlock(key, bytes);
    if (this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(key, block);
    return block;
  }

  /** The block holding `seq` (or the one before the gap it falls in), undefined before the first. */
  private blockOf(seq: number): ScannedBlock | undefined {
    for (const block of this.blocks.values()) {
      if (block.key <= seq && seq <= block.lastSeq) return block;
    }
    for (const { key, value } of this.log.getRange({ start: seq, reverse: true, limit: 1 })) {
      return this.blocks.get(key as number) ?? this.scanned(key as number, value as Buffer);
    }
    return undefined;
  }

  /** Blocks in log order, from the one holding `seq` (or the first after it). */
  private *blocksFrom(seq: number): Generator<ScannedBlock> {
    let start = seq;
    for (const key of this.log.getKeys({ start: seq, reverse: true, limit: 1 })) start = key as number;
    for (const { key, value } of this.log.getRange({ start })) {
      yield this.blocks.get(key as number) ?? this.scanned(key as number, value as Buffer);
    }
  }

  /**
   * Inside a write: removes messages (ascending sequences) from their blocks, each block written
   * again without them or removed when emptied.
   */
  private removeMessagesInTxn(seqs: number[]): void {
    let i = 0;
    while (i < seqs.length) {
      const block = this.blockOf(seqs[i]);
      if (block === undefined || block.lastSeq < seqs[i]) { i++; continue; }
      const gone = new Set<number>();
      while (i < seqs.length && seqs[i] <= block.lastSeq) gone.add(seqs[i++]);
      const kept: BlockEntry[] = [];
      for (let j = 0; j < block.count; j++) {
        if (!gone.has(block.seqs[j])) kept.push({ seq: block.seqs[j], topicId: block.topicIds[j], message: inputOf(block.values(j)) });
      }
      this.blocks.delete(block.key);
      if (kept.length === block.count) continue;
      if (kept.length === 0) {
        this.log.remove(block.key);
        continue;
      }
      // The key stays (a block's key is where lookups of its sequences land), its first entry may go.
      this.log.put(block.key, encodeBlock(kept, 0, kept.length, block.key));
    }
  }

  // ---- topics --------------------------------------------------------------------------------

  ensureTopic(topic: string): Promise<LogTopic> {
    const pending = this.pendingTopics.get(topic);
    if (pending) return pending;
    const existing = this.catalog.topics.get(topic);
    if (existing) return Promise.resolve(existing);
    try {
      checkTopic(topic);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.atomically(() => this.topicInTxn(topic));
  }

  getTopic(topic: string): LogTopic | undefined {
    return this.catalog.topics.get(topic);
  }

  listTopics(): LogTopic[] {
    // Sorted once per change of the catalog (the explorer asks often, at 100,000 topics).
    if (this.sortedTopicsVersion !== this.catalog.topicsVersion) {
      this.sortedTopics = [...this.catalog.topics.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
      this.sortedTopicsVersion = this.catalog.topicsVersion;
    }
    return this.sortedTopics.slice();
  }

  topicCount(): number {
    return this.catalog.topics.size;
  }

  topicsVersion(): number {
    return this.catalog.topicsVersion;
  }

  private sortedTopics: LogTopic[] = [];
  private sortedTopicsVersion = -1;

  async deleteTopic(topic: string): Promise<void> {
    if (!this.catalog.topics.has(topic)) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
    await this.env.write(() => {
      const info = this.catalog.topics.get(topic);
      if (!info) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
      this.removeTopicInTxn(info);
    });
  }

  /** The topic's entry, created when absent. Inside a write transaction. */
  private topicInTxn(topic: string): LogTopic {
    const found = this.catalog.topics.get(topic);
    if (found) return found;
    const database = this.defaultDatabase;
    const table = topicTableName(topic, (name) => this.catalog.findTable(database, name) !== undefined);
    const info: LogTopic = { topic, database, table, createdAt: new Date().toISOString(), topicId: this.nextTopicId++ };
    this.catalog.putTopic(info);
    this.createdInTxn?.push(info);
    this.env.catalog.put(['topic-id'], this.nextTopicId);
    return info;
  }

  /**
   * Removes a topic's entry at once (its messages can no longer be read) and marks it for the
   * purge of its messages, which runs afterwards in short commits. Inside a write transaction.
   */
  private removeTopicInTxn(info: LogTopic): void {
    this.catalog.removeTopic(info.topic);
    this.views.delete(info.topicId);
    // The next sequence is the last block's last sequence + 1 on open, unless the newest messages
    // were just deleted: record it with the delete, so no sequence is ever handed out twice.
    this.env.catalog.put(['log-seq'], this.nextSeq);
    this.env.catalog.put(['purge', info.topicId], true);
    setImmediate(() => void this.purge(info.topicId));
  }

  /**
   * Removes a deleted topic's messages (index and log), PURGE_CHUNK per commit, so a topic of
   * millions of messages never holds the event loop (the broker shares it). Its mark goes with
   * the last chunk; a purge cut short by a close or a crash goes on at the next open.
   */
  private purge(topicId: number): Promise<void> {
    this.purging = this.purging.then(async () => {
      for (let more = true; more && !this.closing;) {
        more = await this.env.write(() => {
          const removed = this.topicIndex.removeInTxn(topicId, MAX_SEQ, PURGE_CHUNK);
          this.removeMessagesInTxn(removed);
          if (removed.length < PURGE_CHUNK) this.env.catalog.remove(['purge', topicId]);
          return removed.length === PURGE_CHUNK;
        });
        this.blocks.clear(); // a reader may have cached a block as it was before this commit
      }
    }).catch(() => undefined); // an environment closed meanwhile: the mark stays, the next open goes on
    return this.purging;
  }

  /**
   * Removes a topic's messages up to a sequence (retention), PURGE_CHUNK per commit like a purge.
   * Trims run one after another; a close stops one after its current chunk (it resolves with what
   * it removed: the rest stays, to be trimmed by the next run).
   */
  trimTopic(topic: string, upToSequence: number, keep?: number): Promise<number> {
    const run = this.trimming.then(async () => {
      const info = this.catalog.topics.get(topic);
      const upTo = Math.floor(Number(upToSequence));
      if (!info || !(upTo >= 1)) return 0;
      const { topicId } = info;
      let removed = 0;
      for (let more = true; more && !this.closing;) {
        more = await this.env.write(() => {
          // The topic may have been deleted (and its purge begun) since: its messages are not ours.
          if (this.catalog.topicsById.get(topicId) !== info) return false;
          const gone = this.topicIndex.removeInTxn(topicId, upTo, PURGE_CHUNK, keep);
          this.removeMessagesInTxn(gone);
          // The next sequence is the last block's last sequence + 1 on open: keep it when the newest go.
          if (gone.length > 0) this.env.catalog.put(['log-seq'], this.nextSeq);
          removed += gone.length;
          return gone.length === PURGE_CHUNK;
        });
        this.blocks.clear(); // a reader may have cached a block as it was before this commit
      }
      return removed;
    });
    this.trimming = run.catch(() => 0);
    return run;
  }

  /** Resolves when the purges scheduled so far have finished (or stopped at a close). */
  async purged(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve)); // a delete schedules its purge on the next turn
    await this.purging;
  }

  /** Before the environment closes: stops purging after the current chunk, writes the index. */
  async close(): Promise<void> {
    this.closing = true;
    await this.purging;
    await this.trimming;
    await this.topicIndex.close();
  }

  private dropInTxn(ts: TableState): void {
    const info = ts.topicId === undefined ? undefined : this.catalog.topicsById.get(ts.topicId);
    if (info) this.removeTopicInTxn(info);
  }

  // ---- appends -------------------------------------------------------------------------------

  /**
   * Runs a write all or nothing: in a child transaction (a throw rolls back what it wrote), with
   * the counters and the topics it created in memory restored, so a refused call leaves no trace
   * and no retry doubles. Used when an append creates topics: their catalog entries and the
   * messages go in one commit.
   */
  private atomically<T>(action: () => T): Promise<T> {
    let settle!: (durable: boolean) => void;
    const outcome = new Promise<boolean>((resolve) => { settle = resolve; });
    let created: LogTopic[] = [];
    const written = this.env.writeAtomic(() => {
      const { nextTopicId } = this;
      created = [];
      this.createdInTxn = created;
      try {
        const result = action();
        for (const info of created) {
          const ensured = outcome.then((durable) => {
            if (!durable) throw new EngineError('INTERNAL', { reason: `the commit creating topic "${info.topic}" failed` });
            return info;
          });
          ensured.catch(() => undefined); // answered to whoever asks; nobody may
          this.pendingTopics.set(info.topic, ensured);
        }
        return result;
      } catch (error) {
        this.nextTopicId = nextTopicId;
        for (const info of created) {
          this.catalog.removeTopic(info.topic);
          this.views.delete(info.topicId);
        }
        created = [];
        throw error;
      } finally {
        this.createdInTxn = undefined;
      }
    });
    const done = (durable: boolean): void => {
      for (const info of created) this.pendingTopics.delete(info.topic);
      settle(durable);
    };
    written.then(() => done(true), () => done(false));
    return written;
  }

  append(messages: LogAppend[]): Promise<number[]> {
    let checked: CheckedAppend;
    try {
      checked = this.checkAppend(messages, null);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.appendChecked(checked);
  }

  appendEach(messages: LogAppend[]): Promise<Array<number | EngineError>> {
    const refused = new Map<number, EngineError>();
    let checked: CheckedAppend;
    try {
      checked = this.checkAppend(messages, refused);
    } catch (error) {
      return Promise.reject(error);
    }
    if (refused.size === 0) return this.appendChecked(checked);
    return this.appendChecked(checked).then((seqs) => {
      const out = new Array<number | EngineError>(messages.length);
      for (let i = 0, j = 0; i < out.length; i++) out[i] = refused.get(i) ?? seqs[j++];
      return out;
    });
  }

  /**
   * Checks entries to append; one lookup of each topic checks it and finds its id. With
   * `refused`, an entry that fails is left out and its error kept under its index; without, the
   * first failure throws.
   */
  private checkAppend(messages: LogAppend[], refused: Map<number, EngineError> | null): CheckedAppend {
    if (!Array.isArray(messages)) throw new EngineError('INVALID_PARAMETER', { param: 'messages', reason: 'an array is required' });
    const topics = this.catalog.topics;
    const pending = this.pendingTopics.size > 0 ? this.pendingTopics : undefined;
    const entries = new Array<BlockEntry>(messages.length);
    /** Every topic exists and is durable: plain puts (else a transaction creates the new ones). */
    let known = true;
    let n = 0;
    for (let i = 0; i < messages.length; i++) {
      const entry = messages[i];
      try {
        if (entry === null || typeof entry !== 'object') throw invalidMessage('each entry has a topic and a message');
        const info = topics.get(entry.topic);
        if (info === undefined) checkTopic(entry.topic);
        checkMessage(entry.message);
        if (info === undefined || (pending !== undefined && pending.has(entry.topic))) known = false;
        entries[n++] = { seq: 0, topicId: info === undefined ? 0 : info.topicId, message: entry.message };
      } catch (error) {
        if (refused === null) throw error;
        refused.set(i, error instanceof EngineError ? error : new EngineError('INVALID_PARAMETER', { param: `messages[${i}]`, reason: String(error) }));
      }
    }
    if (n === messages.length) return { appends: messages, entries, known };
    entries.length = n;
    return { appends: messages.filter((_, i) => !refused!.has(i)), entries, known };
  }

  /** Appends checked entries (checkAppend) in the turn's commit; resolves with their sequences once durable. */
  private appendChecked({ appends: messages, entries, known }: CheckedAppend): Promise<number[]> {
    const n = entries.length;
    if (n === 0) return Promise.resolve([]);
    // Numbered now, on either path: sequences follow the order of the calls, which is the order
    // of their commits (a child transaction's callback runs later, but in its place in the queue).
    const before = { nextSeq: this.nextSeq, lastCreateTs: this.lastCreateTs };
    this.numberEntries(entries);
    let written: Promise<unknown>;
    try {
      written = known
        ? this.putBlocks(entries)
        : this.atomically(() => {
          for (let i = 0; i < n; i++) entries[i].topicId = this.topicInTxn(messages[i].topic).topicId;
          void this.putBlocks(entries);
        });
    } catch (error) {
      // Nothing was queued (encoding failed): the numbers are given back.
      this.nextSeq = before.nextSeq;
      this.lastCreateTs = before.lastCreateTs;
      return Promise.reject(error);
    }
    const last = entries[n - 1].seq;
    // Answered in call order, which is sequence order: lmdb-js can answer a plain put before a
    // child transaction queued earlier (a topic-creating append), and the message core routes
    // appends in the order they are answered (a subscriber would get them out of order).
    const previous = this.previousAppend;
    const answered = written.then(() => previous.then(() => {
      // Every append numbered before this one is answered: all up to `last` is durable and indexed.
      if (last > this.durableSeq) this.durableSeq = last;
      this.indexEntries(entries);
      if (this.followers.size > 0) this.tellFollowers(messages, entries);
      return seqsOf(entries);
    }), (error: unknown) => previous.then(() => { throw error; }));
    this.previousAppend = answered.catch(() => undefined);
    return answered;
  }

  follow(listener: LogFollower): () => void {
    this.followers.add(listener);
    return () => { this.followers.delete(listener); };
  }

  /** A durable append's messages to the followers, as one array (the payloads as appended, not copied). */
  private tellFollowers(appends: LogAppend[], entries: BlockEntry[]): void {
    const logged = new Array<LoggedMessage>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const m = entries[i].message;
      logged[i] = {
        sequence: entries[i].seq, topic: appends[i].topic, createTs: m.createTs, payload: m.payload, qos: m.qos, retain: m.retain,
        contentType: m.contentType, correlationData: m.correlationData, responseTopic: m.responseTopic, expirySeconds: m.expirySeconds,
        userProperties: m.userProperties, payloadFormat: m.payloadFormat, publisher: m.publisher,
      };
    }
    for (const listener of this.followers) {
      try {
        listener(logged);
      } catch (error) {
        // A follower's fault is its own (the message core logs its routing faults): the append
        // stays answered, the other followers are told, and the fault is not hidden.
        const warning = new Error(`a message log follower threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        warning.name = 'LogFollowerFault';
        process.emitWarning(warning);
      }
    }
  }

  /** Appends messages of one topic (StoragePort.appendMessages; its caller turns a throw into a rejection). */
  appendTo(topic: string, messages: MessageInput[]): Promise<number[]> {
    if (!Array.isArray(messages)) throw new EngineError('INVALID_PARAMETER', { param: 'messages', reason: 'an array is required' });
    if (!this.catalog.topics.has(topic)) checkTopic(topic);
    const n = messages.length;
    for (let i = 0; i < n; i++) checkMessage(messages[i]);
    if (n === 0) {
      // the topic exists after a call, even an empty one
      return this.catalog.topics.has(topic) ? Promise.resolve([]) : this.ensureTopic(topic).then(() => []);
    }
    return this.append(messages.map((message) => ({ topic, message })));
  }

  /** Gives the entries their sequences, with create_ts never going back along the log. */
  private numberEntries(entries: BlockEntry[]): void {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      entry.seq = this.nextSeq++;
      const m = entry.message;
      if (m.createTs < this.lastCreateTs) entry.message = { ...m, createTs: this.lastCreateTs };
      else this.lastCreateTs = m.createTs;
    }
  }

  /**
   * Encodes numbered entries into blocks (everything that can throw happens before the first
   * put) and puts them; resolves once they are durable. Outside a transaction the puts join the
   * commit of this event-loop turn and need no call back into JavaScript inside it.
   */
  private putBlocks(entries: BlockEntry[]): Promise<boolean> {
    const n = entries.length;
    const blocks: Array<[number, Buffer]> = [];
    for (let from = 0; from < n;) {
      let to = from + 1;
      let bytes = payloadSize(entries[from].message);
      while (to < n && to - from < BLOCK_MAX_ENTRIES && bytes < BLOCK_TARGET_BYTES) bytes += payloadSize(entries[to++].message);
      blocks.push([entries[from].seq, encodeBlock(entries, from, to)]);
      from = to;
    }
    let written: Promise<boolean> = Promise.resolve(true);
    for (const [key, bytes] of blocks) written = this.log.put(key, bytes);
    return written;
  }

  /** Durable entries into the topic index; those of a topic deleted meanwhile leave the blocks. */
  private indexEntries(entries: BlockEntry[]): void {
    const byId = this.catalog.topicsById;
    let orphans: number[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      if (byId.has(entries[i].topicId)) this.topicIndex.add(entries[i].topicId, entries[i].seq);
      else (orphans ??= []).push(entries[i].seq);
    }
    if (orphans === undefined || this.closing) return;
    const seqs = orphans;
    // With the purges (`purged()` waits for it too).
    this.purging = this.purging
      .then(() => this.env.write(() => this.removeMessagesInTxn(seqs)))
      .then(() => this.blocks.clear(), () => undefined);
  }

  // ---- reads ---------------------------------------------------------------------------------

  lastSequence(): number {
    return this.durableSeq;
  }

  private message(seq: number, v: StoredValues): LoggedMessage | undefined {
    const info = this.catalog.topicsById.get(v[0] as number);
    if (!info) return undefined;
    return {
      sequence: seq, topic: info.topic, createTs: v[1] as string, payload: v[2] as LoggedMessage['payload'],
      qos: v[3] as number, retain: v[4] as boolean, contentType: v[5] as string | null,
      correlationData: v[6] as Uint8Array | null, responseTopic: v[7] as string | null,
      expirySeconds: v[8] as number | null, userProperties: v[9] as LoggedMessage['userProperties'],
      payloadFormat: v[10] as number | null, publisher: v[11] as string | null,
    };
  }

  read(sequence: number): LoggedMessage | undefined {
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return undefined;
    const block = this.blockOf(sequence);
    const i = block === undefined ? -1 : block.indexOf(sequence);
    // undefined too when its topic was deleted (purge pending)
    return i < 0 ? undefined : this.message(sequence, block!.values(i));
  }

  readFrom(after: number, limit: number): LoggedMessage[] {
    const out: LoggedMessage[] = [];
    const max = Math.floor(Number(limit));
    if (!(max > 0)) return out;
    const start = Math.max(0, Math.floor(Number(after) || 0)) + 1;
    for (const block of this.blocksFrom(start)) {
      for (let i = block.firstAtOrAfter(start); i < block.count; i++) {
        if (!this.catalog.topicsById.has(block.topicIds[i])) continue;
        const m = this.message(block.seqs[i], block.values(i));
        if (m) out.push(m);
        if (out.length >= max) return out;
      }
    }
    return out;
  }

  readTopic(topic: string, options: TopicReadOptions): LoggedMessage[] {
    const out: LoggedMessage[] = [];
    const info = this.catalog.topics.get(topic);
    const max = Math.floor(Number(options?.limit));
    if (!info || !(max > 0)) return out;
    const from = Math.ceil(options.from ?? 0);
    const to = Math.floor(options.to ?? MAX_SEQ);
    if (from > to) return out;
    const range: SequenceRange = options.reverse === true ? { start: to, end: from - 1, reverse: true } : { start: from, end: to + 1 };
    let skip = options.skip !== undefined && options.skip > 0 ? Math.floor(options.skip) : 0;
    for (const seq of this.topicIndex.sequences(info.topicId, range)) {
      if (skip > 0) { skip--; continue; }
      const v = this.valuesOf(info.topicId, seq);
      if (v === undefined) continue;
      const m = this.message(seq, v);
      if (m) out.push(m);
      if (out.length >= max) break;
    }
    return out;
  }

  countTopic(topic: string, fromSequence = 0): number {
    const info = this.catalog.topics.get(topic);
    return info ? this.topicIndex.count(info.topicId, fromSequence) : 0;
  }

  // ---- the integration table view --------------------------------------------------------------

  private template(): TableDefinition {
    if (this.viewDefinitionTemplate === null) {
      const def = this.schema.buildDefinition(this.defaultDatabase, 'mqtt_msg_', TOPIC_COLUMNS);
      const index: IndexDefinition = { name: CREATE_TS_INDEX, unique: false, fields: [{ name: 'create_ts', ascending: true }], automatic: false };
      def.indexes.push(index);
      this.createTsSpecs = resolveKeySegments(def, index.fields);
      this.viewColumnPos = columnPositions(def);
      this.viewDefinitionTemplate = def;
    }
    return this.viewDefinitionTemplate;
  }

  /** The integration table of a topic: a read-only TableState over the log. */
  view(info: LogTopic): TableState {
    let ts = this.views.get(info.topicId);
    if (ts) {
      // least recently used goes first: a hit moves to the end
      this.views.delete(info.topicId);
      this.views.set(info.topicId, ts);
      return ts;
    }
    const template = this.template();
    const def = freezeDefinition({
      ...template, database: info.database, name: info.table, topic: info.topic, createdAt: info.createdAt,
      columns: template.columns, indexes: template.indexes,
    });
    const records = new TopicRecords(this, info.topicId) as unknown as RecordsDb;
    const specs = this.createTsSpecs!;
    const indexState: IndexState = {
      def: def.indexes[1], dbName: LOG_INDEX_DB, db: new TopicCreateTsIndex(this, info.topicId, specs) as unknown as IndexDb,
      specs, keyLength: keyLength(specs),
    };
    const topicsById = this.catalog.topicsById;
    ts = {
      def, dbName: `${LOG_DB}#${info.topicId}`, records, indexes: [indexState], columnPos: this.viewColumnPos!,
      nextId: 0, persistedNextId: 0, topicId: info.topicId,
      // dropped once the topic's entry is gone (or replaced by a new topic of that name)
      get dropped(): boolean { return topicsById.get(info.topicId) !== info; },
      set dropped(_value: boolean) { /* follows the catalog */ },
    };
    if (this.views.size >= MAX_CACHED_VIEWS) this.views.delete(this.views.keys().next().value!);
    this.views.set(info.topicId, ts);
    return ts;
  }

  /** The values of message `seq` if it belongs to the topic. */
  valuesOf(topicId: number, seq: number): StoredValues | undefined {
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
    const block = this.blockOf(seq);
    if (block === undefined) return undefined;
    const i = block.indexOf(seq);
    return i < 0 || block.topicIds[i] !== topicId ? undefined : block.values(i);
  }

  /** Sequences of a topic, from `start` (inclusive) towards `end` (exclusive), per lmdb-js range rules on sequences. */
  sequences(topicId: number, options: SequenceRange): Generator<number> {
    return this.topicIndex.sequences(topicId, options);
  }

  countOfTopic(topicId: number): number {
    return this.topicIndex.count(topicId);
  }
}

/** A topic's messages as the records database of its integration table (key = sequence). */
class TopicRecords {
  constructor(private readonly log: LmdbMessageLog, private readonly topicId: number) {}

  get(id: number): unknown[] | undefined {
    const v = this.log.valuesOf(this.topicId, id);
    return v === undefined ? undefined : rowValues(v);
  }

  doesExist(id: number): boolean {
    return this.log.valuesOf(this.topicId, id) !== undefined;
  }

  *getRange(options: { start?: number; end?: number; reverse?: boolean; exclusiveStart?: boolean; limit?: number } = {}): Generator<{ key: number; value: unknown[] }> {
    let n = 0;
    for (const seq of this.log.sequences(this.topicId, options)) {
      const v = this.log.valuesOf(this.topicId, seq);
      if (v === undefined) continue;
      yield { key: seq, value: rowValues(v) };
      if (options.limit !== undefined && ++n >= options.limit) return;
    }
  }

  *getKeys(options: { start?: number; end?: number; reverse?: boolean; exclusiveStart?: boolean; limit?: number } = {}): Generator<number> {
    for (const { key } of this.getRange(options)) yield key;
  }

  getStats(): { entryCount: number } {
    return { entryCount: this.log.countOfTopic(this.topicId) };
  }
}

/**
 * `create_ts_idx` of an integration table, served from the topic's (topic, sequence) range: the
 * log's create_ts never decreases along the sequence, so create_ts order is sequence order and a
 * key bound becomes a sequence found by binary search. Keys are produced as a real index would
 * hold them (encoded create_ts ‖ 8-byte id).
 */
class TopicCreateTsIndex {
  constructor(private readonly log: LmdbMessageLog, private readonly topicId: number, private readonly specs: KeySegmentSpec[]) {}

  private keyOf(seq: number, v: unknown[]): Buffer {
    return appendRecordId(encodeIndexKey(this.specs, { create_ts: v[1] } as Row), seq);
  }

  private keyAt(seq: number): Buffer | undefined {
    const v = this.log.valuesOf(this.topicId, seq);
    return v === undefined ? undefined : this.keyOf(seq, v);
  }

  /** The first sequence of the topic whose key satisfies `pred` (monotone: false…false true…true); undefined: none. */
  private firstWhere(pred: (key: Buffer) => boolean): number | undefined {
    let first: number | undefined;
    for (const s of this.log.sequences(this.topicId, {})) { first = s; break; }
    if (first === undefined) return undefined;
    let last = first;
    for (const s of this.log.sequences(this.topicId, { reverse: true })) { last = s; break; }
    // smallest s in [first, last + 1] with P(s) = pred(key of the first entry >= s), P(last + 1) = true
    let lo = first;
    let hi = last + 1;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      let entry: number | undefined;
      for (const s of this.log.sequences(this.topicId, { start: mid })) { entry = s; break; }
      const key = entry === undefined ? undefined : this.keyAt(entry);
      if (key === undefined || pred(key)) hi = mid;
      else lo = mid + 1;
    }
    if (lo > last) return undefined;
    for (const s of this.log.sequences(this.topicId, { start: lo })) return s;
    return undefined;
  }

  *getKeys(options: { start?: Buffer; end?: Buffer; reverse?: boolean; exclusiveStart?: boolean; limit?: number } = {}): Generator<Buffer> {
    const { start, end } = options;
    const exclusive = options.exclusiveStart === true;
    let n = 0;
    if (options.reverse !== true) {
      let from: number | undefined;
      if (start !== undefined) {
        from = this.firstWhere((k) => (exclusive ? Buffer.compare(k, start) > 0 : Buffer.compare(k, start) >= 0));
        if (from === undefined) return;
      }
      for (const seq of this.log.sequences(this.topicId, from === undefined ? {} : { start: from })) {
        const key = this.keyAt(seq);
        if (key === undefined) continue;
        if (end !== undefined && Buffer.compare(key, end) >= 0) return;
        yield key;
        if (options.limit !== undefined && ++n >= options.limit) return;
      }
      return;
    }
    let below: number | undefined;
    if (start !== undefined) {
      below = this.firstWhere((k) => (exclusive ? Buffer.compare(k, start) >= 0 : Buffer.compare(k, start) > 0));
    }
    const range = below === undefined ? { reverse: true } : { reverse: true, start: below, exclusiveStart: true };
    for (const seq of this.log.sequences(this.topicId, range)) {
      const key = this.keyAt(seq);
      if (key === undefined) continue;
      if (end !== undefined && Buffer.compare(key, end) <= 0) return;
      yield key;
      if (options.limit !== undefined && ++n >= options.limit) return;
    }
  }
}
