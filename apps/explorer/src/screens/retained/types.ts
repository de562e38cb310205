/** A listRetainedMessages message and page (the getMessagesFromMqTopic shape with metadata, MQTT properties, topic and size), shared with the server. */
export type { RetainedMessage, RetainedPage } from '../../../../../lib/explorer/api-types.js';

/** The Retained screen's route for a filter (and page) or one topic. */
export function retainedHash(filter: string, topic?: string, page?: number): { screen: string; path?: string[]; query: Record<string, string | number | undefined> } {
  return {
    screen: 'retained',
    path: topic === undefined ? [] : topic.split('/'),
    query: { filter: filter === '#' ? undefined : filter, page: page && page > 1 ? page : undefined },
  };
}
