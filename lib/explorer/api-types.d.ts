/**
 * The shapes the server sends the explorer, written once: the results of the message core's
 * explore commands (plugins/messaging/explore-commands.ts, reached as the mq actions
 * browseTopics, getMqOverview, deleteRetainedMessages, disconnectMqClient, deleteMqSessions) and
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
}

/** `mq.browseTopics`: one page of a level's nodes, and how many the level has. */
export interface BrowseTopicsResult {
  total: number;
  nodes: TopicNodeSummary[];
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
}
