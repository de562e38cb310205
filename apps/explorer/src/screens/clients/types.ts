/** Shapes of the session actions (docs/actions.md: listMqSessions, describeMqSessions). */
export interface SessionSummary {
  clientName: string;
  kind: 'mqtt' | 'mqApi';
  owner: string;
  connected: boolean;
  subscriptionCount: number;
}

export interface Subscription {
  topicFilter: string;
  qos?: number;
  subscriptionIdentifier?: number;
  receiveMyMessages?: boolean;
  receiveRetainedMessages?: string;
  receiveRetainedFlagAsPublished?: boolean;
  includeExpiredMessages?: boolean;
  binaryFormat?: string;
  [option: string]: unknown;
}

export interface SessionDescription extends SessionSummary {
  subscriptions: Subscription[];
  subscribedTopics: string[];
  publishedTopics: string[];
  messagesPublished: number;
  messagesReceived: number;
  lastPublishedAt: number | string | null;
  lastReceivedAt: number | string | null;
  publishRate: number;
  receiveRate: number;
  position: number;
  expiryInterval: number;
}

export const KIND_TEXT: Record<string, string> = { mqtt: 'MQTT', mqApi: 'MQ API' };
