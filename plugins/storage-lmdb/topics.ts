/**
 * Topics on LMDB: each topic's integration table created on its first message (one at a time per
 * topic), message appends and reads (CONTRACT.md, "Message topics and integration tables").
 */
import { EngineError } from '../../kernel/errors';
import type { MessageInput, MessageReadOptions, StoredRecord, TopicInfo } from '../../kernel/storage/storage-port';
import type { RecordId } from '../../kernel/storage/types';
import { saveNextId, type Catalog, type TableState } from './catalog';
import type { LmdbEnvironment } from './environment';
import { checkTopic, messageRow, readMessages, topicTableName, TOPIC_COLUMNS, TOPIC_INDEXES } from './integration-tables';
import { applyInsert, type PreparedRow } from './records';
import { checkArray, type LmdbSchema } from './schema';

export class LmdbTopics {
  private readonly pendingTopics = new Map<string, Promise<TopicInfo>>();

  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    private readonly schema: LmdbSchema,
    private readonly defaultDatabase: string,
  ) {}

  ensureTopic(topic: string): Promise<TopicInfo> {
    const existing = this.catalog.topics.get(topic);
    if (existing) return Promise.resolve(existing);
    checkTopic(topic);
    let pending = this.pendingTopics.get(topic);
    if (!pending) {
      pending = this.createTopic(topic).finally(() => this.pendingTopics.delete(topic));
      this.pendingTopics.set(topic, pending);
    }
    return pending;
  }

  private async createTopic(topic: string): Promise<TopicInfo> {
    const database = this.defaultDatabase;
    for (let attempt = 0; ; attempt++) {
      const found = this.catalog.topics.get(topic);
      if (found) return found;
      const table = topicTableName(topic, (name) => this.catalog.findTable(database, name) !== undefined);
      const def = this.schema.buildDefinition(database, table, TOPIC_COLUMNS);
      const info: TopicInfo = { topic, database, table, createdAt: def.createdAt };
      try {
        await this.schema.createTableInternal(def, TOPIC_INDEXES, info);
        return info;
      } catch (error) {
        // a table of that name appeared meanwhile: pick another name
        if (attempt < 3 && error instanceof EngineError && error.id === 'TABLE_EXISTS') continue;
        throw error;
      }
    }
  }

  getTopic(topic: string): TopicInfo | undefined {
    return this.catalog.topics.get(topic);
  }

  listTopics(): TopicInfo[] {
    return [...this.catalog.topics.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  }

  async deleteTopic(topic: string): Promise<void> {
    if (!this.catalog.topics.has(topic)) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
    await this.env.write(() => {
      const info = this.catalog.topics.get(topic);
      if (!info) throw new EngineError('INVALID_TOPIC', { topic, reason: 'the topic does not exist' });
      const ts = this.catalog.findTable(info.database, info.table);
      if (ts && ts.def.topic === topic) this.catalog.dropTable(ts);
      else this.catalog.removeTopic(topic);
    });
  }

  private topicTable(info: TopicInfo): TableState {
    return this.catalog.table(info.database, info.table);
  }

  async appendMessages(topic: string, messages: MessageInput[]): Promise<RecordId[]> {
    checkArray(messages, 'messages');
    const info = this.catalog.topics.get(topic) ?? await this.ensureTopic(topic);
    const ts = this.topicTable(info);
    const n = messages.length;
    if (n === 0) return [];
    const prepared = new Array<PreparedRow>(n);
    for (let i = 0; i < n; i++) prepared[i] = messageRow(ts, messages[i]);
    return this.env.write(() => {
      const ids = applyInsert(ts, prepared);
      saveNextId(ts, this.env.catalog);
      return ids;
    });
  }

  readMessages(topic: string, options: MessageReadOptions): StoredRecord[] {
    const info = this.catalog.topics.get(topic);
    if (!info) return [];
    return readMessages(this.topicTable(info), options);
  }

  /** Waits for topic tables being created (before the environment closes). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.pendingTopics.values()]);
  }
}
