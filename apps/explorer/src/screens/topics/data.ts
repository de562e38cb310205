/** Reads of the message log for the Topics screen, and the shared draft of the Publish tab. */
import { signal } from '@preact/signals';
import { call } from '../../api.js';
import type { BrowseTopicsResult } from '../../../../../lib/explorer/api-types.js';
import { fromStored, isoMillis, type StoredMessage, type TopicMessage, type UserProperty } from './format.js';

// includeTransformFields adds nothing on a topic without transform fields.
const READ = { includeMessageMetadata: true, includeMqttProperties: true, includeTransformFields: true, binaryFormat: 'base64' };

/** Messages of a topic in log (oldest-first) order. */
export async function readMessages(topic: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<TopicMessage[]> {
  const result = await call<{ messages: StoredMessage[] }>('mq', 'getMessagesFromMqTopic', { topic, ...READ, ...params }, signal);
  return result.messages.map((message) => fromStored(message, topic));
}

/** One stored message by id, or null. */
export async function readMessage(topic: string, id: number, signal?: AbortSignal): Promise<TopicMessage | null> {
  const [message] = await readMessages(topic, { startFrom: id, maxMessages: 1 }, signal);
  return message && message.id === id ? message : null;
}

/** The message of the topic just before an id, or null. */
export async function readPrevious(topic: string, id: number, signal?: AbortSignal): Promise<TopicMessage | null> {
  const [message] = await readMessages(topic, { startFrom: 'tail', endBefore: id, maxMessages: 1 }, signal);
  return message ?? null;
}

/**
 * How many messages of a topic lie in a time range (`from` inclusive, `until` exclusive), at most
 * `upper` (the topic's count): a binary search over the newest-first position before `until`,
 * one message read per step (about 14 reads for 10,000 messages; `skip` steps over the topic index).
 */
export async function countInRange(topic: string, from: string | undefined, until: string | undefined, upper: number, signal?: AbortSignal): Promise<number> {
  const fromMillis = from ? isoMillis(from) : -Infinity;
  // Whether the message at newest-first position `k` before `until` exists and is not before `from`.
  const inRange = async (k: number): Promise<boolean> => {
    const params: Record<string, unknown> = { startFrom: 'tail', maxMessages: 1, skip: k, includeMessageMetadata: true };
    if (until) params.endBefore = until;
    const result = await call<{ messages: StoredMessage[] }>('mq', 'getMessagesFromMqTopic', { topic, ...params }, signal);
    const [message] = result.messages;
    return message !== undefined && isoMillis(message.timestamp ?? '') >= fromMillis;
  };
  let low = 0;
  let high = upper;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (await inRange(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}

export interface TopicDescription {
  topic: string;
  databaseName: string;
  tableName: string;
  createdAt: string;
  messageCount: number;
  firstMessageId: number | null;
  lastMessageId: number | null;
  firstMessageTime: string | null;
  lastMessageTime: string | null;
  subscribers: string[];
  messagesLastMinute: number;
  messagesLastHour: number;
  messagesLastDay: number;
  retention: Record<string, unknown> | null;
}

/** describeTopics of one topic; null when the path is no topic (only a branch). */
export async function describeTopic(topic: string, signal?: AbortSignal): Promise<TopicDescription | null> {
  try {
    const result = await call<{ topics: TopicDescription[] }>('mq', 'describeTopics', { topics: [topic] }, signal);
    return result.topics[0] ?? null;
  } catch (error) {
    if ((error as { code?: number }).code === 14244) return null;
    throw error;
  }
}

/** Whether a path has topics below it (browseTopics with it as the prefix). */
export async function hasChildren(path: string, signal?: AbortSignal): Promise<boolean> {
  const result = await call<BrowseTopicsResult>('mq', 'browseTopics', { prefix: path, limit: 1 }, signal);
  return result.total > 0;
}

export interface PublishDraft {
  topic: string;
  payload: string;
  /** How the payload box is read: text as typed, JSON (checked), or bytes written as hex or base64. */
  payloadType: 'utf8' | 'json' | 'hex' | 'base64';
  qos: number;
  retain: boolean;
  contentType: string;
  responseTopic: string;
  correlationData: string;
  expirySeconds: string;
  userProperties: UserProperty[];
}

export function emptyDraft(topic: string): PublishDraft {
  return { topic, payload: '', payloadType: 'utf8', qos: 0, retain: false, contentType: '', responseTopic: '', correlationData: '', expirySeconds: '', userProperties: [] };
}

/** Set by "Republish": the Publish tab starts from it once. */
export const republishDraft = signal<PublishDraft | null>(null);
