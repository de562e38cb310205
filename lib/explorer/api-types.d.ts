/**
 * The shapes the server sends the explorer, written once: the results of the message core's
 * explore commands (plugins/messaging/explore-commands.ts, reached as the mq actions
 * browseTopics, getMqOverview, listRetainedMessages, deleteRetainedMessages, disconnectMqClient,
 * deleteMqSessions), of the session commands (plugins/messaging/session-commands.ts: listMqSessions,
 * describeMqSessions), the messages the mq reads answer (plugins/messaging/retrieve.ts) and
 * the events stream (plugins/explorer/events.ts). The server and the app (apps/explorer/src) both
 * import these types.
 *
 * A declaration file of plain data shapes (no DOM, no Node types, no imports): neither build emits
 * it, so the browser gets no server code and the server's dist no app file, and the app's build
 * (rootDir apps/explorer/src) may read it from here. test/explorer/api-types.test.ts checks it on
 * its own and that no other file declares these shapes.
 */

/** One node of a topic-tree level (`mq.browseTopics`). */
export interface TopicNodeSummary {
  name: string;
  path: string;
  /** A topic exists at exactly this path (it may have children too). */
  isTopic: boolean;
  hasChildren: boolean;
  topicCount: number;
  messageCount: number;
  lastMessageTime: string | null;
  messagesPerSecond: number;
  /** A topic's last value, shortened (only to an account that may read the topic). */
  preview?: string;
  /** A topic holding a retained message. */
  retained?: boolean;
}

/** `mq.browseTopics`: one page of a level's nodes, and how many the level has. */
export interface BrowseTopicsResult {
  /** Nodes of the level (for paging). */
  total: number;
  /** Topics below the level's nodes that pass the filter (the tree's footer). */
  topics: number;
  nodes: TopicNodeSummary[];
  /**
   * Topics whose messages are still being counted (the server counts for a bounded time per call
   * and the rest in the background): their nodes' counts and times leave them out. Absent when 0.
   */
  countsPending?: number;
}

export interface BusyTopic {
  topic: string;
  messagesPerSecond: number;
}

/**
 * `mq.overview` (getMqOverview), also pushed every second as `event: overview`. A type alias (not
 * an interface), so it is assignable to Record<string, unknown> for handlers typed loosely.
 */
export type Overview = {
  clientsConnected: number;
  clientsDisconnected: number;
  topics: number;
  subscriptions: number;
  retainedMessages: number;
  storedMessages: number;
  messagesReceived: number;
  messagesSent: number;
  messagesInPerSecond: number;
  messagesOutPerSecond: number;
  tables: number;
  uptimeSeconds: number;
  /** At most ten, busiest first. */
  busiestTopics: BusyTopic[];
  /**
   * In a cluster (absent on a single node): each node's own figures, the node asked first. The
   * totals above add up the nodes that answered (clients, subscriptions, messages and their
   * rates; topics, retained and stored messages and tables are the same on every node).
   */
  nodes?: OverviewNode[];
};

/**
 * In a cluster: one node's part of a cluster-wide answer (describeMqSessions without names,
 * getMqOverview, deleteMqSessions). `answered` false marks a node that did not answer within
 * cluster_request_timeout_ms (or refused): its part is missing from the answer, `reason` says why.
 */
export interface NodePart {
  node: string;
  answered: boolean;
  reason?: string;
}

/** `mq.overview` in a cluster: one node's own figures (absent when it did not answer). */
export type OverviewNode = NodePart & {
  clientsConnected?: number;
  clientsDisconnected?: number;
  subscriptions?: number;
  messagesReceived?: number;
  messagesSent?: number;
  messagesInPerSecond?: number;
  messagesOutPerSecond?: number;
  uptimeSeconds?: number;
};

/** A topic published to in the last second, with how many messages. */
export interface ActiveTopic {
  topic: string;
  count: number;
  lastMessageTime: string;
}

/** `event: activity`: the topics published to in the last second (`more`: how many left out). */
export type Activity = {
  topics: ActiveTopic[];
  more: number;
};

/** `mq.deleteRetained`: how many retained messages matched (and were forgotten unless dryRun), the first 1,000 topics. */
export interface DeleteRetainedResult {
  count: number;
  topics: string[];
}

/** `mq.disconnectClient`. */
export interface DisconnectClientResult {
  clientName: string;
  disconnected: true;
}

/** `mq.deleteSessions`: how many sessions matched (and were ended unless dryRun), the first 1,000 names. */
export interface DeleteSessionsResult {
  count: number;
  clientNames: string[];
  /** In a cluster: each node's part (a node marked not answered ended none of its sessions it was asked to). */
  nodes?: NodePart[];
}

/** `mq.describeSessions` (describeMqSessions). */
export interface MqSessionDescriptions {
  sessions: MqSessionDescription[];
  /** In a cluster, without names: each node's part (the sessions of a node marked not answered are missing). */
  nodes?: NodePart[];
}

/** A session as the mq session actions list it (`mq.listSessions`, listMqSessions; plugins/messaging/session-commands.ts). */
export interface MqSessionSummary {
  clientName: string;
  kind: 'mqtt' | 'mqApi';
  owner: string;
  connected: boolean;
  /** null: not known on the node asked (a clean session another node of a cluster holds in memory). */
  subscriptionCount: number | null;
  /** In a cluster: the node that owns the session (null: none claimed it); absent on a single node. */
  node?: string | null;
}

/** `mq.listSessions` (listMqSessions): one page, and how many sessions match. */
export interface MqSessionPage {
  total: number;
  sessions: MqSessionSummary[];
}

/**
 * A session's subscription as `mq.describeSessions` lists it: its filter and the options the
 * message core keeps (MQTT 5 names: noLocal, retainAsPublished, retainHandling), not the
 * changeSubscriptions parameters they were given as.
 */
export interface MqSessionSubscription {
  topicFilter: string;
  qos: 0 | 1 | 2;
  noLocal: boolean;
  retainAsPublished: boolean;
  /** 0: retained messages on every subscribe, 1: only on a new subscription, 2: never. */
  retainHandling: 0 | 1 | 2;
  subscriptionIdentifier?: number;
  /** The log's last sequence when the subscription was made: older messages are not for it. */
  since?: number;
  /** MQ API sessions: expired messages are read too (marked), and how binary values are written. */
  includeExpired?: boolean;
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
}

/** `mq.describeSessions` (describeMqSessions): one session in full. */
export interface MqSessionDescription extends MqSessionSummary {
  subscriptions: MqSessionSubscription[];
  /** Topics of the log its subscriptions match (at most 1,000). */
  subscribedTopics: string[];
  /** Topics it published to (at most 1,000). */
  publishedTopics: string[];
  messagesPublished: number;
  messagesReceived: number;
  /** ISO 8601 (UTC) time of its last publish; null: none since the server started. */
  lastPublishedAt: string | null;
  lastReceivedAt: string | null;
  /** Messages per second since the session was created (or the server started). */
  publishRate: number;
  receiveRate: number;
  /** Messages of the log after its position (an upper bound of what it still has to read). */
  position: number;
  expiryInterval: number;
  /** ISO 8601: when its connection began (null: not connected). */
  connectedSince: string | null;
  /** ISO 8601: when it lost its connection (null: connected, or never connected since start). */
  disconnectedSince: string | null;
  /** Of the last connection (MQTT): the peer's address, protocol level (3, 4, 5), keep alive in force. */
  address: string | null;
  protocolVersion: number | null;
  keepAliveSeconds: number | null;
  /** Messages sent and not yet acknowledged (QoS 1 and 2). */
  inflight: number;
  /** Messages logged after its position: what it may still have to read (an upper bound). */
  queued: number;
}

/** An MQTT 5 user property of a message. */
export interface UserProperty {
  key: string;
  value: string;
}

/**
 * A message as the mq reads answer it (getMessagesFromMqTopic, getMessagesFromMqApiSession,
 * listRetainedMessages; plugins/messaging/retrieve.ts shapeMessage): the fields present follow
 * the call's include options. A type alias, assignable to Record<string, unknown>.
 */
export type ShapedMessage = {
  /** includeMessageMetadata: the message's id in the log, its create_ts (canonical, no zone). */
  id?: number;
  timestamp?: string;
  /** true when a transform field could not be read from the payload; `log` then says why, per field. */
  error?: boolean;
  log?: Array<{ fieldName: string; recordPath: string; reason: string }> | null;
  payload: unknown;
  /** Set when a JSON payload nested too deeply is answered as its text. */
  payloadEncoding?: string;
  /** Set when the payload is binary: how it is written. */
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
  /** includeMqttProperties: '' for an absent text property. */
  qos?: number;
  retain?: boolean;
  contentType?: string;
  /** Written like a binary payload ('' when absent). */
  correlationData?: string | number[];
  responseTopic?: string;
  expirySeconds?: number | null;
  userProperties?: UserProperty[] | null;
  payloadFormatIndicator?: number;
  publisher?: string;
  /** includeTransformFields, on a topic with transform fields: their values by field name (null when unread). */
  transformFields?: Record<string, unknown>;
  /** includeOtherFields. */
  topic?: string;
  messageHasExpired?: true;
};

/** A message read with its metadata and MQTT properties (as the explorer reads them). */
export type StoredMessage = ShapedMessage & Required<Pick<ShapedMessage,
  'id' | 'timestamp' | 'qos' | 'retain' | 'contentType' | 'correlationData' | 'responseTopic' | 'expirySeconds'
  | 'userProperties' | 'payloadFormatIndicator' | 'publisher'>>;

/** A retained message (`mq.listRetained`, listRetainedMessages): with its topic and its payload's size in bytes. */
export type RetainedMessage = StoredMessage & {
  topic: string;
  size: number;
};

/** `mq.listRetained` (listRetainedMessages): one page in topic order, and how many topics match. */
export interface RetainedPage {
  total: number;
  messages: RetainedMessage[];
}

/** One sample of the Overview's last hour (GET /apps/explorer/overview-history). */
export interface OverviewSample {
  /** ISO 8601, UTC. */
  time: string;
  /** Averaged since the previous sample. */
  messagesInPerSecond: number;
  messagesOutPerSecond: number;
  clientsConnected: number;
  clientsDisconnected: number;
}
export interface OverviewHistory {
  intervalSeconds: number;
  /** Oldest first; the last one taken at the request. */
  samples: OverviewSample[];
}

/** One subscription of one session (mq.listSubscriptions, listMqSubscriptions). */
export interface SubscriptionRow extends MqSessionSubscription {
  clientName: string;
  kind: 'mqtt' | 'mqApi';
  connected: boolean;
  /** In a cluster: the node that owns the session (as MqSessionSummary.node). */
  node?: string | null;
}
export interface SubscriptionPage {
  /** Subscriptions that pass the filter. */
  total: number;
  subscriptions: SubscriptionRow[];
}
