/**
 * Stored-message counts and last message times of topics, for the topic tree (mq.browseTopics):
 * counted on the log's topic index once, then only the messages appended since (a range count
 * that is almost always empty); recounted whole every RECOUNT_MS so retention trims and deleted
 * topics show.
 */
import type { MessageLogPort } from '../../kernel/storage/message-log-port';
import { timestampToMs } from '../data/values/wire-format';

const RECOUNT_MS = 30_000;

interface Counted {
  count: number;
  /** The highest sequence counted. */
  upTo: number;
  lastMessageTime: string | null;
  countedAt: number;
}

export class TopicCounts {
  private readonly counted = new Map<string, Counted>();

  constructor(private readonly log: MessageLogPort) {}

  of(topic: string, now: number): { count: number; lastMessageTime: string | null } {
    let entry = this.counted.get(topic);
    if (!entry || now - entry.countedAt > RECOUNT_MS) {
      entry = { count: this.log.countTopic(topic), upTo: 0, lastMessageTime: null, countedAt: now };
      this.readLast(topic, entry);
      this.counted.set(topic, entry);
    } else {
      const added = this.log.countTopic(topic, entry.upTo + 1);
      if (added > 0) {
        entry.count += added;
        this.readLast(topic, entry);
      }
    }
    return entry;
  }

  private readLast(topic: string, entry: Counted): void {
    const last = this.log.readTopic(topic, { reverse: true, limit: 1 })[0];
    entry.upTo = last?.sequence ?? 0;
    entry.lastMessageTime = last ? new Date(timestampToMs(last.createTs)).toISOString() : null;
  }
}
