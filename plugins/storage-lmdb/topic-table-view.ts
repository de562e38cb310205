/**
 * Integration tables as views over the message log (docs/storage.md, "Integration tables"): a
 * topic's table has no sub-database of its own. Its records are the topic's messages (record id =
 * sequence), read through the topic's index of the log, and its `create_ts_idx` is served from
 * the same index. A view provides what reads need from a table (table-stores.ts) and nothing a
 * write could use: writes need an LMDB table (catalog.ts `TableState`).
 *
 * Views are built on first access and cached, at most MAX_CACHED_VIEWS of them.
 */
import type { LogTopic } from '../../kernel/storage/message-log-port';
import type { IndexDefinition, Row, TableDefinition } from '../../kernel/storage/types';
import { appendRecordId, encodeIndexKey, resolveKeySegments, type KeySegmentSpec } from './index-keys';
import { freezeDefinition } from './catalog';
import { CREATE_TS_INDEX, TOPIC_COLUMNS } from './integration-tables';
import type { StoredValues as MessageValues } from './log-blocks';
import type { LmdbSchema } from './schema';
import type {
  IdRangeOptions, IndexReader, KeyRangeOptions, ReadableIndex, ReadableTable, RecordReader,
} from './table-stores';
import type { SequenceRange } from './topic-index';
import type { TopicTransform, TopicTransforms } from './topic-transforms';

/** Integration-table views kept built; beyond it the oldest is forgotten (rebuilt on next use). */
const MAX_CACHED_VIEWS = 10_000;

/** What a view reads from the message log. */
export interface TopicMessages {
  /** The stored values of message `seq` (log-blocks.ts layout) if it belongs to the topic. */
  valuesOf(topicId: number, seq: number): MessageValues | undefined;
  /** The topic's sequences over a range (lmdb-js range rules on sequences). */
  sequences(topicId: number, range: SequenceRange): Iterable<number>;
  /** How many messages the topic holds. */
  countOfTopic(topicId: number): number;
}

/** A stored log value as the integration table's positional values (columns after `id`). */
function rowValues(v: MessageValues): unknown[] {
  return [v[1], v[2], false, null, v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]];
}

/** The same with the topic's transform fields after the built-in columns, and their `error` and `log`. */
function transformedValues(v: MessageValues, seq: number, transforms: TopicTransforms, t: TopicTransform): unknown[] {
  const { values, error, log } = transforms.valuesOf(t, seq);
  return [v[1], v[2], error, log, v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], ...values];
}

/** A topic's integration table. */
export class TopicTableView implements ReadableTable {
  readonly records: TopicRecords;
  readonly indexes: readonly ReadableIndex[];

  constructor(
    readonly def: TableDefinition,
    readonly topicId: number,
    private readonly info: LogTopic,
    private readonly topicsById: ReadonlyMap<number, LogTopic>,
    messages: TopicMessages,
    createTsSpecs: KeySegmentSpec[],
    transform?: { transforms: TopicTransforms; t: TopicTransform },
  ) {
    this.records = new TopicRecords(messages, topicId, transform);
    const indexes: ReadableIndex[] = [{ def: def.indexes[1], db: new TopicCreateTsIndex(messages, topicId, createTsSpecs), specs: createTsSpecs }];
    // Indexes over transform fields are real index sub-databases (topic-transforms.ts).
    for (const f of transform?.t.fields ?? []) {
      if (f.index === null) continue;
      indexes.push({ def: def.indexes.find((x) => x.name === f.indexName)!, db: f.index.db, specs: f.index.specs });
    }
    this.indexes = indexes;
  }

  /** Dropped once the topic's entry is gone (or replaced by a new topic of that name). */
  get dropped(): boolean {
    return this.topicsById.get(this.topicId) !== this.info;
  }
}

/** The views of a message log's topics, cached by topic id. */
export class TopicTableViews {
  private readonly views = new Map<number, TopicTableView>();
  private template: { def: TableDefinition; createTsSpecs: KeySegmentSpec[] } | null = null;

  constructor(
    private readonly messages: TopicMessages,
    private readonly topicsById: ReadonlyMap<number, LogTopic>,
    private readonly schema: LmdbSchema,
    private readonly defaultDatabase: string,
    private readonly transforms: TopicTransforms,
  ) {}

  /** The integration table of a topic. */
  table(info: LogTopic): TopicTableView {
    let view = this.views.get(info.topicId);
    if (view) {
      // least recently used goes first: a hit moves to the end
      this.views.delete(info.topicId);
      this.views.set(info.topicId, view);
      return view;
    }
    const template = this.templateOf();
    const t = this.transforms.of(info.topicId);
    // Transform fields add columns after the built-in ones, and their indexes.
    const columns = t === undefined ? template.def.columns : [...template.def.columns, ...this.transforms.columnsOf(t)];
    const indexes = t === undefined ? template.def.indexes : [
      ...template.def.indexes,
      ...t.fields.filter((f) => f.indexName !== null).map((f): IndexDefinition => ({
        name: f.indexName!, unique: false, fields: [{ name: f.fieldName, ascending: true }], automatic: false,
      })),
    ];
    const def = freezeDefinition({
      ...template.def, database: info.database, name: info.table, topic: info.topic, createdAt: info.createdAt, columns, indexes,
    });
    view = new TopicTableView(
      def, info.topicId, info, this.topicsById, this.messages, template.createTsSpecs, t === undefined ? undefined : { transforms: this.transforms, t },
    );
    if (this.views.size >= MAX_CACHED_VIEWS) this.views.delete(this.views.keys().next().value!);
    this.views.set(info.topicId, view);
    return view;
  }

  /** Forgets a topic's view (its topic was deleted, or its creation undone). */
  forget(topicId: number): void {
    this.views.delete(topicId);
  }

  private templateOf(): { def: TableDefinition; createTsSpecs: KeySegmentSpec[] } {
    if (this.template === null) {
      const def = this.schema.buildDefinition(this.defaultDatabase, 'mqtt_msg_', TOPIC_COLUMNS, ''); // createdAt: the topic's
      const index: IndexDefinition = { name: CREATE_TS_INDEX, unique: false, fields: [{ name: 'create_ts', ascending: true }], automatic: false };
      def.indexes.push(index);
      this.template = { def, createTsSpecs: resolveKeySegments(def, index.fields) };
    }
    return this.template;
  }
}

/** A topic's messages as the records of its integration table (key = sequence). */
export class TopicRecords implements RecordReader {
  constructor(
    private readonly messages: TopicMessages,
    private readonly topicId: number,
    private readonly transform?: { transforms: TopicTransforms; t: TopicTransform },
  ) {}

  private row(v: MessageValues, seq: number): unknown[] {
    const tr = this.transform;
    return tr === undefined ? rowValues(v) : transformedValues(v, seq, tr.transforms, tr.t);
  }

  get(id: number): unknown[] | undefined {
    const v = this.messages.valuesOf(this.topicId, id);
    return v === undefined ? undefined : this.row(v, id);
  }

  *getRange(options: IdRangeOptions): Generator<{ key: number; value: unknown[] }> {
    let n = 0;
    for (const seq of this.messages.sequences(this.topicId, options)) {
      const v = this.messages.valuesOf(this.topicId, seq);
      if (v === undefined) continue;
      yield { key: seq, value: this.row(v, seq) };
      if (options.limit !== undefined && ++n >= options.limit) return;
    }
  }

  /** How many records (messages) the table holds. */
  count(): number {
    return this.messages.countOfTopic(this.topicId);
  }
}

/**
 * `create_ts_idx` of an integration table, served from the topic's (topic, sequence) range: the
 * log's create_ts never decreases along the sequence, so create_ts order is sequence order and a
 * key bound becomes a sequence found by binary search. Keys are produced as a real index would
 * hold them (encoded create_ts ‖ 8-byte id).
 */
class TopicCreateTsIndex implements IndexReader {
  constructor(private readonly messages: TopicMessages, private readonly topicId: number, private readonly specs: KeySegmentSpec[]) {}

  private keyOf(seq: number, v: MessageValues): Buffer {
    return appendRecordId(encodeIndexKey(this.specs, { create_ts: v[1] } as Row), seq);
  }

  private keyAt(seq: number): Buffer | undefined {
    const v = this.messages.valuesOf(this.topicId, seq);
    return v === undefined ? undefined : this.keyOf(seq, v);
  }

  /** The topic's first sequence in a range, undefined when none. */
  private firstOf(range: SequenceRange): number | undefined {
    for (const s of this.messages.sequences(this.topicId, range)) return s;
    return undefined;
  }

  /** The first sequence of the topic whose key satisfies `pred` (monotone: false…false true…true); undefined: none. */
  private firstWhere(pred: (key: Buffer) => boolean): number | undefined {
    const first = this.firstOf({});
    if (first === undefined) return undefined;
    const last = this.firstOf({ reverse: true }) ?? first;
    // smallest s in [first, last + 1] with P(s) = pred(key of the first entry >= s), P(last + 1) = true
    let lo = first;
    let hi = last + 1;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const entry = this.firstOf({ start: mid });
      const key = entry === undefined ? undefined : this.keyAt(entry);
      if (key === undefined || pred(key)) hi = mid;
      else lo = mid + 1;
    }
    if (lo > last) return undefined;
    return this.firstOf({ start: lo });
  }

  *getKeys(options: KeyRangeOptions): Generator<Buffer> {
    const { start, end } = options;
    const exclusive = options.exclusiveStart === true;
    let n = 0;
    if (options.reverse !== true) {
      let from: number | undefined;
      if (start !== undefined) {
        from = this.firstWhere((k) => (exclusive ? Buffer.compare(k, start) > 0 : Buffer.compare(k, start) >= 0));
        if (from === undefined) return;
      }
      for (const seq of this.messages.sequences(this.topicId, from === undefined ? {} : { start: from })) {
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
    const range: SequenceRange = below === undefined ? { reverse: true } : { reverse: true, start: below, exclusiveStart: true };
    for (const seq of this.messages.sequences(this.topicId, range)) {
      const key = this.keyAt(seq);
      if (key === undefined) continue;
      if (end !== undefined && Buffer.compare(key, end) <= 0) return;
      yield key;
      if (options.limit !== undefined && ++n >= options.limit) return;
    }
  }
}
