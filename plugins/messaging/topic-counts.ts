/**
 * Stored-message counts and last message times of topics, for the topic tree (mq.browseTopics):
 * counted on the log's topic index once; after that the activity recorder's counts of what each
 * topic got are added (a quiet topic costs nothing, a busy one no index read); where the recorder
 * cannot vouch for them (it restarted, or its span overlaps what was counted) the index is read
 * from the last counted sequence. Counted whole again every RECOUNT_MS, so retention trims show.
 */
import type { MessageLogPort } from '../../kernel/storage/message-log-port';
import { timestampToMs } from '../../lib/values/timestamps';
import type { TopicActivity } from './topic-activity';

const RECOUNT_MS = 5 * 60_000;

interface Counted {
  count: number;
  /** The highest sequence counted. */
  upTo: number;
  lastMessageTime: string | null;
  countedAt: number;
  /** The activity recorder's epoch when counted: within it, "not touched" means unchanged. */
  epoch: number;
}

export class TopicCounts {
  private counted = new Map<string, Counted>();

  constructor(private readonly log: MessageLogPort, private readonly activity: TopicActivity) {}

  /**
   * A topic's count. Counting one never counted (or due for its recount) reads its whole index
   * (about 40 µs): with `mayCount` false the last count is returned as it is, or null when there is
   * none, so a caller with many topics can bound its time and leave the rest to the background.
   */
  of(topic: string, now: number, mayCount = true): { count: number; lastMessageTime: string | null } | null {
    let entry = this.counted.get(topic);
    if (!entry || now - entry.countedAt > RECOUNT_MS) {
      if (!mayCount) return entry ?? null;
      this.activity.takeAppended(topic);
      entry = { count: this.log.countTopic(topic), upTo: 0, lastMessageTime: null, countedAt: now, epoch: this.activity.epoch };
      this.readLast(topic, entry);
      this.counted.set(topic, entry);
      return entry;
    }
    const appended = this.activity.takeAppended(topic);
    if (appended && entry.epoch === this.activity.epoch && appended.firstSequence > entry.upTo) {
      entry.count += appended.count;
      entry.upTo = appended.lastSequence;
      entry.lastMessageTime = new Date(appended.lastMessageAt).toISOString();
    } else if (appended || entry.epoch !== this.activity.epoch) {
      entry.epoch = this.activity.epoch;
      const added = this.log.countTopic(topic, entry.upTo + 1);
      if (added > 0) {
        entry.count += added;
        this.readLast(topic, entry);
      }
    }
    return entry;
  }

  /** Forgets a deleted topic: a topic made again under its name is counted afresh. */
  forget(topic: string): void {
    this.counted.delete(topic);
    this.activity.takeAppended(topic);
  }

  /** Forgets topics the log no longer has (called with the current topic count). */
  prune(topicCount: number): void {
    if (this.counted.size <= topicCount * 2 + 1000) return;
    const kept = new Map<string, Counted>();
    for (const [topic, entry] of this.counted) if (this.log.getTopic(topic)) kept.set(topic, entry);
    this.counted = kept;
  }

  private readLast(topic: string, entry: Counted): void {
    const last = this.log.readTopic(topic, { reverse: true, limit: 1 })[0];
    entry.upTo = last?.sequence ?? 0;
    entry.lastMessageTime = last ? new Date(timestampToMs(last.createTs)).toISOString() : null;
  }
}
