/**
 * The message log port: the one durable log of every message of every topic (docs/storage.md,
 * "The message log"). The message core (broker, mq actions) reaches storage only through it, so a
 * replicated log can later stand in for the local one.
 *
 * - Every message gets a global, increasing sequence: its message id (the `id` column of its
 *   topic's integration table). Sequences are never reused, also after a topic is deleted.
 * - `append` takes messages of any topics; appends issued in one event-loop turn share one commit,
 *   and the promise resolves with their sequences once that commit is durable.
 * - Reads see every append whose promise has resolved.
 * - Each topic has a catalog entry: topic ↔ numeric topic id ↔ integration table name (docs/storage.md,
 *   "Integration tables"), created by the first append (or `ensureTopic`) in the same commit.
 *
 * A storage plugin provides it as `StoragePort.messageLog`: the one way to topics and their
 * messages (the StoragePort reads a topic's integration table like any table).
 */
import type { EngineError } from '../errors';
import type { MessageInput, TopicInfo } from './storage-port';

/** A topic's catalog entry. */
export interface LogTopic extends TopicInfo {
  /** Numeric id of the topic in the log's index (never reused). */
  topicId: number;
}

/**
 * One transform field of a topic (docs/storage.md, "Transform fields"): a column of the topic's
 * integration table whose value is read from each message's JSON payload when it is appended
 * (the product's `jsonToTableFields` transform step, one entry of its `mapOfPropertiesToFields`).
 */
export interface TransformFieldInput {
  /** The column's name (a column name; not one of the integration table's built-in columns). */
  fieldName: string;
  /** `source_payload` followed by the property path: `source_payload.sensor.temperature`, `source_payload.values[0]`. */
  recordPath: string;
  /** The column's type (the engine's column types; not binary, variant or decimal types). */
  type: string;
  /** For char and varchar: the most bytes kept. */
  length?: number | null;
  /** An index over the column, named so (REST queries, getRecordsByIndex); absent or null: none. */
  indexName?: string | null;
}

/** A transform field as configured. */
export interface TransformField {
  fieldName: string;
  recordPath: string;
  type: string;
  length: number | null;
  indexName: string | null;
}

/** A topic's transform fields and the progress of the back-fill of its earlier messages. */
export interface TransformStatus {
  fields: TransformField[];
  backfill: {
    /** `running`: earlier messages are being filled in (their new fields read null until then). */
    state: 'idle' | 'running';
    messagesDone: number;
    messagesTotal: number;
  };
}

/** A message's transform fields: their values by field name, and why any is null (`error`, `log`). */
export interface TransformValues {
  fields: Record<string, unknown>;
  error: boolean;
  /** One entry per field that could not be read: `{ fieldName, recordPath, reason }`; null when none. */
  log: Array<{ fieldName: string; recordPath: string; reason: string }> | null;
}

/** A message to append: the topic it was published to and the message. */
export interface LogAppend {
  topic: string;
  message: MessageInput;
}

/** A message as the log holds it. */
export interface LoggedMessage extends MessageInput {
  /** Global sequence = message id. */
  sequence: number;
  topic: string;
}

/** A read of one topic's messages by sequence. */
export interface TopicReadOptions {
  /** Lowest sequence read (inclusive); default: the first. */
  from?: number;
  /** Highest sequence read (inclusive); default: the last. */
  to?: number;
  /** Newest first. */
  reverse?: boolean;
  /** Messages of the range passed over first (on the index alone: no message is read for them). */
  skip?: number;
  limit: number;
}

/**
 * The message core's durable state beside the log (sessions, retained pointers, QoS 2 receipts):
 * string keys, values of any msgpack-able shape. A write joins the commit of the appends of the
 * same event-loop turn (one commit for both), so a session's position and in-flight map are
 * durable with the messages they concern; its promise resolves once that commit is durable.
 * Reads see every write issued so far (also before it is durable).
 */
export interface LogStatePort {
  get(key: string): unknown;
  /** Every entry whose key starts with `prefix`, in key order. */
  entries(prefix: string): Iterable<[string, unknown]>;
  put(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
}

/**
 * Told of every message once it is durable (`MessageLogPort.follow`): the messages of one commit
 * of appends, in sequence order, whoever appended them. It must not throw (what it throws is
 * reported as a process warning; the append is answered all the same).
 */
export type LogFollower = (messages: readonly LoggedMessage[]) => void;

export interface MessageLogPort {
  /**
   * Durable state of the message core, committed with the appends (LogStatePort): what every node
   * of a cluster shares (sessions, topic configuration, retained pointers). Each write is an
   * operation entry, replayed with the log.
   */
  readonly state: LogStatePort;
  /**
   * This process's own state (the retained checkpoint, caches), the same kind of store kept apart:
   * committed with the appends too, but never an operation entry and never replayed.
   */
  readonly localState: LogStatePort;
  /** One message by its sequence; undefined when absent (never appended, or removed). */
  read(sequence: number): LoggedMessage | undefined;
  /**
   * Appends messages (of any topics, created on first use) in the current turn's commit;
   * resolves with their sequences, in input order and increasing, once the commit is durable.
   * Throws INVALID_TOPIC (a wildcard, an empty topic) or INVALID_PARAMETER before writing anything.
   */
  append(messages: LogAppend[]): Promise<number[]>;
  /**
   * As `append`, for messages that are not one whole (the publishes of one turn, from many
   * clients): an entry the log refuses (INVALID_TOPIC, INVALID_PARAMETER) is left out alone and
   * its place in the answer holds the error; the others are stored and numbered as by `append`.
   * Rejects only when the commit fails (nothing stored) or `messages` is not an array.
   */
  appendEach(messages: LogAppend[]): Promise<Array<number | EngineError>>;
  /**
   * Follows the log: `listener` receives the messages of each durable append (an `appendEach`:
   * only those stored), as one array in sequence order, once they are durable and readable, before
   * the append's own promise resolves. Returns the function that stops it. This is how the message
   * core routes every message, whoever appended it (docs/architecture.md, "Message core layout").
   */
  follow(listener: LogFollower): () => void;
  /** Up to `limit` messages of all topics with a sequence greater than `after`, in sequence order. */
  readFrom(after: number, limit: number): LoggedMessage[];
  /** One topic's messages by sequence range; an unknown topic reads as empty. */
  readTopic(topic: string, options: TopicReadOptions): LoggedMessage[];
  /** How many messages of the topic the log holds (0 when unknown); from a sequence on when given. */
  countTopic(topic: string, fromSequence?: number): number;
  /** The highest sequence whose commit is durable (0 when none): a position no crash can hand out again. */
  lastSequence(): number;
  /**
   * The sequence the last append applied was given, durable or not (0 when none): where an entry
   * applied now stands among the messages. Every node of a cluster applies the same entries in the
   * same order, so this number, read while an entry is applied (an `operations.tap` listener), is
   * the same on every node (docs/cluster.md, "Shared subscriptions").
   */
  assignedSequence(): number;
  /** The bytes the log takes in the store (its messages and its topic index), read from the store's page counts. */
  byteSize(): number;

  /** The topic's entry, created (in its own commit) when absent. */
  ensureTopic(topic: string): Promise<LogTopic>;
  getTopic(topic: string): LogTopic | undefined;
  /** Every topic, sorted by name. */
  listTopics(): LogTopic[];
  /** How many topics the catalog holds. */
  topicCount(): number;
  /**
   * A number that changes whenever a topic is created or deleted (never back to an earlier value):
   * lets a reader notice a new topic even when another was deleted meanwhile (same count).
   */
  topicsVersion(): number;
  /**
   * Removes the topic's messages with a sequence ≤ `upToSequence` (retention: the oldest first),
   * from the index and the log, in commits of a few thousand removals so a long trim never holds
   * the event loop; the topic's entry stays. Resolves with how many were removed (0 for an unknown
   * topic). Sequences stay never reused, also when the newest messages were trimmed. `keep`: one
   * sequence in that range left in place (the topic's retained message).
   */
  trimTopic(topic: string, upToSequence: number, keep?: number): Promise<number>;
  /**
   * Deletes a topic: its entry goes in one commit, and the promise resolves once that commit is
   * durable; from then on none of its messages is read, and a new topic of that name starts
   * empty (under another topic id). Its messages then leave the index and the log in
   * the background, a few thousand per commit so a large topic never holds the event loop (a
   * purge cut short by a close or a crash goes on at the next open). Throws INVALID_TOPIC when
   * unknown.
   */
  deleteTopic(topic: string): Promise<void>;
  /**
   * Sets a topic's transform fields (the whole list: fields left out are removed, their columns
   * and indexes dropped; an unchanged field keeps its values). Messages appended from then on get
   * them in their own commit; the topic's earlier messages are back-filled in the background, a
   * few thousand per commit (`transformStatus` shows the progress). Throws INVALID_TOPIC for an
   * unknown topic, INVALID_PARAMETER for a bad field.
   */
  configureTransform(topic: string, fields: TransformFieldInput[]): Promise<TransformStatus>;
  /** The topic's transform fields and back-fill progress; undefined for an unknown topic. */
  transformStatus(topic: string): TransformStatus | undefined;
  /** A message's transform fields; undefined when its topic has none (or the message is gone). */
  transformValues(topic: string, sequence: number): TransformValues | undefined;
}
