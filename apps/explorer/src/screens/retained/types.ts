/** A listRetainedMessages message (the getMessagesFromMqTopic shape with metadata and MQTT properties). */
export interface RetainedMessage {
  topic: string;
  id?: number | string;
  timestamp?: string;
  qos?: number;
  retain?: boolean;
  payload: unknown;
  binaryFormat?: string;
  contentType?: string;
  correlationData?: string;
  responseTopic?: string;
  expirySeconds?: number | null;
  userProperties?: Array<{ key: string; value: string }>;
  payloadFormatIndicator?: number | boolean;
  publisher?: string;
  messageHasExpired?: boolean;
  [field: string]: unknown;
}

export interface RetainedPage {
  total: number;
  messages: RetainedMessage[];
}

/** The Retained screen's route for a filter (and page) or one topic. */
export function retainedHash(filter: string, topic?: string, page?: number): { screen: string; path?: string[]; query: Record<string, string | number | undefined> } {
  return {
    screen: 'retained',
    path: topic === undefined ? [] : topic.split('/'),
    query: { filter: filter === '#' ? undefined : filter, page: page && page > 1 ? page : undefined },
  };
}
