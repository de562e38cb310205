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
 * Its integration table is a view over the log and its index (topic-table-view.ts). Reads of the
 * log are in log-reads.ts, purges of deleted topics and trims in log-purge.ts, the checks of a
 * message in log-message-check.ts; here: appends, topics and followers.
 */
import type { Histogram } from '../../kernel/metrics';
import type { Clock } from '../../kernel/clock';
import { EngineError } from '../../kernel/errors';
import type {
  LogAppend, LogFollower, LoggedMessage, LogTopic, MessageLogPort, TopicReadOptions, TransformFieldInput, TransformStatus,
  TransformValues,
} from '../../kernel/storage/message-log-port';
import type { MessageInput } from '../../kernel/storage/storage-port';
import type { Catalog } from './catalog';
import type { LmdbEnvironment } from './environment';
import { LmdbLogState, LOCAL_STATE_DB, LOG_STATE_DB } from './log-state';
import {
  BLOCK_MAX_ENTRIES, BLOCK_TARGET_BYTES, encodeBlock, ScannedBlock, type BlockEntry,
} from './log-blocks';
import { checkMessage, invalidMessage } from './log-message-check';
import { LogPurges } from './log-purge';
import { LogReads, type BlockDb } from './log-reads';
import { migrateLegacyLog } from './log-migration';
import { CHUNK_DB, TopicIndex } from './topic-index';
import { checkTopic, topicTableName } from './integration-tables';
import type { LmdbSchema } from './schema';
import { entryTime, type OperationLog } from './apply-entry';
import { TopicTableViews, type TopicTableView } from './topic-table-view';
import { TopicTransforms } from './topic-transforms';
import { checkTransformFields } from './transform-fields';

export const LOG_DB = 'log:blocks';
export const LOG_INDEX_DB = CHUNK_DB;

/** Entries to append, checked: the appends kept and their block entries, in order. */
interface CheckedAppend {
  appends: LogAppend[];
  entries: BlockEntry[];
  /** Every topic exists and is durable: plain puts (else a transaction creates the new ones). */
  known: boolean;
}

/** The pages a sub-database uses, in bytes (LMDB's own counts: no scan). */
function dbBytes(db: { getStats(): unknown }): number {
  const s = db.getStats() as { pageSize?: number; treeBranchPageCount?: number; treeLeafPageCount?: number; overflowPages?: number };
  return ((s.treeBranchPageCount ?? 0) + (s.treeLeafPageCount ?? 0) + (s.overflowPages ?? 0)) * (s.pageSize ?? 4096);
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
  readonly localState: LmdbLogState;
  /** The log's reads and the blocks they scanned (log-reads.ts). */
  private readonly reads: LogReads;
  /** The topics' integration tables (topic-table-view.ts). */
  private readonly tables: TopicTableViews;
  private nextSeq = 1;
  private nextTopicId = 1;
  /** The create_ts of the last appended message: create_ts never goes back along the log. */
  private lastCreateTs = '';
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
  /** Purges of deleted topics' messages and trims (log-purge.ts). */
  private readonly purges: LogPurges;
  /** Topics' transform fields (topic-transforms.ts). */
  private readonly transforms: TopicTransforms;
  /** Set by the metrics (lmdb-storage.ts addMetrics): from an append call to its answer, once per call. */
  appendLatency?: Histogram;

  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    schema: LmdbSchema,
    private readonly defaultDatabase: string,
    private readonly operations: OperationLog,
    /** Times the topics ensureTopic creates. */
    private readonly clock: Clock,
  ) {
    this.log = env.root.openDB<Buffer, number>(LOG_DB, { encoding: 'binary' }) as BlockDb;
    this.topicIndex = new TopicIndex(env, () => this.durableSeq);
    this.state = new LmdbLogState(env, LOG_STATE_DB, operations);
    this.localState = new LmdbLogState(env, LOCAL_STATE_DB, null);
    this.reads = new LogReads(this.log, catalog, this.topicIndex);
    this.transforms = new TopicTransforms(env, catalog, this.reads, this.topicIndex, () => this.nextSeq, (topicId) => this.tables.forget(topicId));
    this.purges = new LogPurges(env, catalog, this.log, this.reads, this.topicIndex, () => this.nextSeq, (seqs) => this.transforms.removeInTxn(seqs));
    this.tables = new TopicTableViews(this.reads, catalog.topicsById, schema, defaultDatabase, this.transforms);
    catalog.views = {
      table: (info) => this.tables.table(info),
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
    for (const block of this.reads.blocksFrom(indexed + 1)) {
      for (let i = block.firstAtOrAfter(indexed + 1); i < block.count; i++) {
        const topicId = block.topicIds[i];
        if (this.catalog.topicsById.has(topicId) || purging.has(topicId)) this.topicIndex.add(topicId, block.seqs[i]);
      }
    }
    for (const topicId of this.catalog.purgesPending) void this.purges.purge(topicId);
    this.transforms.load();
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
    return this.operations.submit({ op: 'topic.create', topic, time: entryTime(this.clock) });
  }

  /** Applies a `topic.create` entry (apply-entry.ts): the topic's entry, created at `time` when absent. */
  applyCreateTopic(topic: string, time: string): Promise<LogTopic> {
    const pending = this.pendingTopics.get(topic);
    if (pending) return pending;
    const existing = this.catalog.topics.get(topic);
    if (existing) return Promise.resolve(existing);
    checkTopic(topic);
    return this.atomically(() => this.topicInTxn(topic, time));
  }

  /** The log's reads, for the integrity check (integrity-check.ts). */
  get logReads(): LogReads { return this.reads; }

  getTopic(topic: string): LogTopic | undefined { return this.reads.getTopic(topic); }
  listTopics(): LogTopic[] { return this.reads.listTopics(); }
  topicCount(): number { return this.reads.topicCount(); }
  topicsVersion(): number { return this.reads.topicsVersion(); }

  async deleteTopic(topic: string): Promise<void> {
    if (!this.catalog.topics.has(topic)) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
    await this.operations.submit({ op: 'topic.delete', topic });
  }

  /** Applies a `topic.delete` entry (apply-entry.ts). */
  applyDeleteTopic(topic: string): Promise<void> {
    if (!this.catalog.topics.has(topic)) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
    return this.env.write(() => {
      const info = this.catalog.topics.get(topic);
      if (!info) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
      this.removeTopicInTxn(info);
    });
  }

  /**
   * The topic's entry, created when absent (its `createdAt` is `time`, the entry's). Inside a
   * write transaction: topic ids are given here, in the order entries are applied.
   */
  private topicInTxn(topic: string, time: string): LogTopic {
    const found = this.catalog.topics.get(topic);
    if (found) return found;
    const database = this.defaultDatabase;
    const table = topicTableName(topic, (name) => this.catalog.findTable(database, name) !== undefined);
    const info: LogTopic = { topic, database, table, createdAt: time, topicId: this.nextTopicId++ };
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
    this.tables.forget(info.topicId);
    this.transforms.removeTopicInTxn(info.topicId);
    // The next sequence is the last block's last sequence + 1 on open, unless the newest messages
    // were just deleted: record it with the delete, so no sequence is ever handed out twice.
    this.env.catalog.put(['log-seq'], this.nextSeq);
    this.env.catalog.put(['purge', info.topicId], true);
    setImmediate(() => void this.purges.purge(info.topicId));
  }

  /**
   * Removes a topic's messages up to a sequence (retention), PURGE_CHUNK per commit like a purge.
   * Trims run one after another; a close stops one after its current chunk (it resolves with what
   * it removed: the rest stays, to be trimmed by the next run).
   */
  trimTopic(topic: string, upToSequence: number, keep?: number): Promise<number> {
    // No further than the last sequence handed out: the entry removes the same messages wherever it is applied.
    const upTo = Math.min(Math.floor(Number(upToSequence)), this.nextSeq - 1);
    if (!(upTo >= 1) || !this.catalog.topics.has(topic)) return Promise.resolve(0);
    return this.operations.submit({ op: 'topic.trim', topic, upToSequence: upTo, ...(keep === undefined ? {} : { keep }) });
  }

  /** Applies a `topic.trim` entry (apply-entry.ts). */
  applyTrim(topic: string, upToSequence: number, keep?: number): Promise<number> {
    return this.purges.trim(topic, upToSequence, keep);
  }

  /** Resolves when the purges scheduled so far have finished (or stopped at a close). */
  purged(): Promise<void> { return this.purges.purged(); }

  /** Before the environment closes: stops purging after the current chunk, writes the index. */
  async close(): Promise<void> {
    await this.transforms.close();
    await this.purges.close();
    await this.topicIndex.close();
  }

  private dropInTxn(ts: TopicTableView): void {
    const info = this.catalog.topicsById.get(ts.topicId);
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
          this.tables.forget(info.topicId);
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
    return this.submitAppend(checked);
  }

  /** The checked appends as a `messages.append` entry (none when nothing is left to append). */
  private submitAppend(checked: CheckedAppend): Promise<number[]> {
    if (checked.entries.length === 0) return Promise.resolve([]);
    return this.operations.submit({ op: 'messages.append', messages: checked.appends }, checked);
  }

  /**
   * Applies a `messages.append` entry (apply-entry.ts): numbers its messages now, in entry order,
   * and writes them in the turn's commit. `checked`: the entry's appends as `append` checked them.
   */
  applyAppend(entry: { messages: LogAppend[] }, checked?: unknown): Promise<number[]> {
    return this.appendChecked((checked as CheckedAppend | undefined) ?? this.checkAppend(entry.messages, null));
  }

  appendEach(messages: LogAppend[]): Promise<Array<number | EngineError>> {
    const refused = new Map<number, EngineError>();
    let checked: CheckedAppend;
    try {
      checked = this.checkAppend(messages, refused);
    } catch (error) {
      return Promise.reject(error);
    }
    if (refused.size === 0) return this.submitAppend(checked);
    return this.submitAppend(checked).then((seqs) => {
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
    // Transform fields, from each message alone with the fields in force now, written in the
    // same commit (topics without any: one test per call).
    const fields = this.transforms.active ? this.transforms.compute(entries) : null;
    let written: Promise<unknown>;
    try {
      // Plain puts resolve once committed: `durable` adds the wait for their sync (atomically
      // writes through env.writeAtomic, which does).
      written = known
        ? this.env.durable(this.putBlocks(entries, fields))
        : this.atomically(() => {
          // A topic's createdAt is the time of its first message.
          for (let i = 0; i < n; i++) entries[i].topicId = this.topicInTxn(messages[i].topic, `${entries[i].message.createTs}Z`).topicId;
          void this.putBlocks(entries, fields);
        });
    } catch (error) {
      // Nothing was queued (encoding failed): the numbers are given back.
      this.nextSeq = before.nextSeq;
      this.lastCreateTs = before.lastCreateTs;
      return Promise.reject(error);
    }
    this.env.timeCommit(written);
    const started = this.appendLatency === undefined ? 0 : performance.now();
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
      if (started !== 0) this.appendLatency!.observe((performance.now() - started) / 1000);
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

  /** Appends messages of one topic (an internal writer's insert into its integration table; its caller turns a throw into a rejection). */
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
   * put) and puts them; resolves once they are committed (the caller waits for their sync).
   * Outside a transaction the puts join the commit of this event-loop turn and need no call back
   * into JavaScript inside it.
   */
  private putBlocks(entries: BlockEntry[], fields: ReturnType<TopicTransforms['compute']>): Promise<boolean> {
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
    if (fields !== null) this.transforms.write(fields);
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
    if (orphans !== undefined) this.purges.removeOrphans(orphans);
  }

  // ---- transform fields (topic-transforms.ts) -----------------------------------------------

  configureTransform(topic: string, fields: TransformFieldInput[]): Promise<TransformStatus> {
    if (!this.catalog.topics.has(topic)) return Promise.reject(new EngineError('INVALID_TOPIC', { topic: topic.slice(0, 64), reason: 'the topic does not exist' }));
    let checked;
    try {
      checked = checkTransformFields(fields).map(({ fieldName, recordPath, type, length, indexName }) => ({ fieldName, recordPath, type, length, indexName }));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.operations.submit({ op: 'topic.transform', topic, fields: checked });
  }

  /** Applies a `topic.transform` entry (apply-entry.ts). */
  applyTransform(topic: string, fields: TransformFieldInput[]): Promise<TransformStatus> {
    const info = this.catalog.topics.get(topic);
    if (!info) throw new EngineError('INVALID_TOPIC', { topic: topic.slice(0, 64), reason: 'the topic does not exist' });
    return this.transforms.configure(info, fields.map((f) => ({ fieldName: f.fieldName, recordPath: f.recordPath, type: f.type, length: f.length ?? null, indexName: f.indexName ?? null })));
  }

  transformStatus(topic: string): TransformStatus | undefined {
    const info = this.catalog.topics.get(topic);
    return info === undefined ? undefined : this.transforms.status(info.topicId);
  }

  transformValues(topic: string, sequence: number): TransformValues | undefined {
    const info = this.catalog.topics.get(topic);
    const t = info === undefined ? undefined : this.transforms.of(info.topicId);
    if (t === undefined || this.reads.valuesOf(t.topicId, sequence) === undefined) return undefined;
    const { values, error, log } = this.transforms.valuesOf(t, sequence);
    const fields: Record<string, unknown> = {};
    for (let j = 0; j < t.fields.length; j++) fields[t.fields[j].fieldName] = values[j];
    return { fields, error, log };
  }

  // ---- reads (log-reads.ts) -----------------------------------------------------------------

  lastSequence(): number { return this.durableSeq; }
  assignedSequence(): number { return this.nextSeq - 1; }

  byteSize(): number { return dbBytes(this.log) + dbBytes(this.topicIndex.db); }
  read(sequence: number): LoggedMessage | undefined { return this.reads.read(sequence); }
  readFrom(after: number, limit: number): LoggedMessage[] { return this.reads.readFrom(after, limit); }
  readTopic(topic: string, options: TopicReadOptions): LoggedMessage[] { return this.reads.readTopic(topic, options); }
  countTopic(topic: string, fromSequence = 0): number { return this.reads.countTopic(topic, fromSequence); }
}
