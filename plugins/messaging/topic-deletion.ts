/**
 * `topic.delete`: the one way a topic goes, with its messages and so its integration table (the
 * deleteTopic action, and table.delete / DELETE /table on an integration table, run it). The
 * message core stays consistent with the log: the retained message goes (a new subscriber gets
 * none, and a restart's replay cannot bring it back), decisions cached with the table's name are
 * dropped, and the topic's counts are forgotten. Sessions that still held one of its messages
 * in flight find it gone and drop it, as after any removal from the log.
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { TOPIC_DELETE_COMMAND, type TopicDeleteParams, type TopicDeleteResult } from '../../kernel/messaging/commands';
import type { MessageCore } from './message-core';

export { TOPIC_DELETE_COMMAND, type TopicDeleteParams, type TopicDeleteResult } from '../../kernel/messaging/commands';

/** Whoever keeps something per topic besides the log (the topic tree's counts) forgets it here. */
export type TopicDeletedListener = (topic: string) => void;

export function registerTopicDeletion(engine: Engine, core: MessageCore): { onDeleted(listener: TopicDeletedListener): void } {
  const listeners: TopicDeletedListener[] = [];
  const log = engine.need('storage').messageLog;
  engine.bus.register<TopicDeleteParams, TopicDeleteResult>({
    name: TOPIC_DELETE_COMMAND,
    summary: 'Delete a topic: its messages, its catalog entry (and so its integration table) and its retained message.',
    params: {
      type: 'object', required: ['topic'], additionalProperties: false,
      properties: { topic: { type: 'string', minLength: 1, maxLength: 65_500 } },
    },
    resource: (p) => ({ kind: 'topic', topic: p.topic }),
    handler: async ({ topic }) => {
      if (!log.getTopic(topic)) throw new EngineError('TOPIC_NOT_FOUND', { topic });
      const deletedMessages = log.countTopic(topic);
      await log.deleteTopic(topic);
      // The retained message was one of the deleted messages: new subscribers must not get it.
      core.clearRetained(topic);
      // Decisions cached while the topic had a table name (kernel/auth/resource-aliases.ts) are void.
      core.invalidateDecisions();
      for (const listener of listeners) listener(topic);
      return { topic, deletedMessages };
    },
  });
  return { onDeleted: (listener) => { listeners.push(listener); } };
}
