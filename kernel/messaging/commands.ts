/**
 * Parameters and answers of the message core's commands on the bus, for their callers (the mq
 * actions): `mq.publish`, the session commands, `topic.configure`; and the topic retention
 * service (`engine.need('topicRetention')`).
 */
import type { QoS } from './message';
import type { TransformFieldInput, TransformStatus } from '../storage/message-log-port';

export interface PublishParamsMessage {
  topic: string;
  /** The payload bytes: text (UTF-8) or, with `payloadEncoding: "base64"`, base64. */
  payload: string;
  payloadEncoding?: 'utf8' | 'base64';
  qos?: QoS;
  retain?: boolean;
  contentType?: string;
  responseTopic?: string;
  /** Base64. */
  correlationData?: string;
  messageExpiryInterval?: number;
  payloadFormatIndicator?: boolean;
  userProperties?: Array<{ key: string; value: string }>;
}

export interface PublishResult {
  /** Message ids (log sequences), in input order. */
  ids: number[];
}

export interface SubscriptionChange {
  action: 'add' | 'remove';
  topicFilter: string;
  qos?: QoS;
  subscriptionIdentifier?: number;
  /** false: the client does not receive what it published itself (MQTT No Local). */
  receiveMyMessages?: boolean;
  receiveRetainedMessages?: 'onSubscription' | 'onNewSubscription' | 'never';
  receiveRetainedFlagAsPublished?: boolean;
  includeExpiredMessages?: boolean;
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
}

export interface SubscriptionChangeResult {
  topicFilter: string;
  matchingTopics: string[];
  errorCode: number;
  errorMessage: string;
}

export interface RetentionPolicy {
  /** Messages older than this (by create_ts) go. */
  maxAgeSeconds?: number;
  /** Only the newest this many stay. */
  maxMessages?: number;
}

export interface RetentionStatus {
  policy: RetentionPolicy | null;
  /** Messages trimmed by retention since the engine started. */
  trimmedMessages: number;
  /** Clients whose sessions held the last run's trim back (they still owe older messages). */
  heldBackBy: string[];
}

/** The message log's size against `log_max_bytes` (docs/operations.md "A full disk and the log's size"). */
export interface LogSizeStatus {
  /** The limit (0: none). */
  maxBytes: number;
  /** What the log takes now. */
  bytes: number;
  /** The last run found the log over the limit. */
  overLimit: boolean;
  /** Messages trimmed for the limit since the engine started. */
  trimmedMessages: number;
  /** Messages the last run would have trimmed and kept because a session still owes them. */
  keptOwedMessages: number;
  /** The clients whose sessions owe them. */
  heldBackBy: string[];
}

/** What one retention run did to one topic. */
export interface TopicTrim {
  topic: string;
  /** Messages removed. */
  trimmed: number;
  /** The highest sequence the limits asked to trim (0: none). */
  wanted: number;
  /** The highest sequence trimmed up to, after holding back (0: none). */
  upTo: number;
  heldBackBy: string[];
}

/** `topic.configure`: a topic's retention limits; absent keeps a limit, null or 0 removes it. */
export const TOPIC_CONFIGURE_COMMAND = 'topic.configure';
export interface TopicConfigureParams {
  topic: string;
  retentionSeconds?: number | null;
  retentionMessages?: number | null;
  /**
   * The topic's transform steps, the whole list (docs/actions.md, "configureTopic"): each a
   * `jsonToTableFields` step whose `mapOfPropertiesToFields` name the transform fields. Absent:
   * unchanged; `[]` or null: none.
   */
  transformSteps?: TransformStep[] | null;
}
/** One transform step: the product's `jsonToTableFields` method, JSON payload properties → columns. */
export interface TransformStep {
  transformStepMethod: 'jsonToTableFields';
  mapOfPropertiesToFields: TransformFieldInput[];
}
export interface TopicConfigureResult {
  topic: string;
  retentionSeconds: number | null;
  retentionMessages: number | null;
  /** The transform steps in force (one step holding every field; `[]` when none); answered when given or in force. */
  transformSteps?: TransformStep[];
  /** The back-fill of the topic's earlier messages after fields were added (with transformSteps). */
  transformBackfill?: TransformStatus['backfill'];
}

/** `topic.delete`: a topic, its messages, its integration table and its retained message. */
export const TOPIC_DELETE_COMMAND = 'topic.delete';
export interface TopicDeleteParams { topic: string }
export interface TopicDeleteResult { topic: string; deletedMessages: number }

/** Topic retention as its users see it (the service `topicRetention`). */
export interface TopicRetentionPort {
  /** A topic's policy (undefined: none). */
  get(topic: string): RetentionPolicy | undefined;
  status(topic: string): RetentionStatus;
  /** The log's size against `log_max_bytes`. */
  logStatus(): LogSizeStatus;
  /** Trims what the policies ask (all topics, or those named), never what a session still owes. */
  run(now: number, topics?: string[]): Promise<TopicTrim[]>;
}

declare module '../services' {
  interface EngineServices {
    /** Topic retention (provided by the messaging plugin). */
    topicRetention: TopicRetentionPort;
  }
}
