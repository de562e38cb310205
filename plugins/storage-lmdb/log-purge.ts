/**
 * Removing messages from the message log (message-log.ts): the purge of a deleted topic's messages
 * and retention trims, both in short commits (PURGE_CHUNK messages each) so that a topic of
 * millions of messages never holds the event loop (the broker shares it); and the messages of a
 * topic deleted while they were being appended. Purges run one after another, trims too; a close
 * stops either after its current chunk.
 */
import type { Catalog } from './catalog';
import type { LmdbEnvironment } from './environment';
import { encodeBlock, inputOf, type BlockEntry } from './log-blocks';
import type { BlockDb, LogReads } from './log-reads';
import type { TopicIndex } from './topic-index';

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** Messages a deleted topic's purge (or a trim) removes per commit (a few milliseconds each). */
const PURGE_CHUNK = 2000;

export class LogPurges {
  /** Purges of deleted topics' messages, one after another. */
  private purging: Promise<void> = Promise.resolve();
  /** Retention trims, one after another. */
  private trimming: Promise<number> = Promise.resolve(0);
  private closing = false;

  constructor(
    private readonly env: LmdbEnvironment,
    private readonly catalog: Catalog,
    private readonly log: BlockDb,
    private readonly reads: LogReads,
    private readonly topicIndex: TopicIndex,
    /** The log's next sequence, recorded with a trim (message-log.ts). */
    private readonly nextSeq: () => number,
    /** Inside the same write: what else goes with removed messages (their transform fields). */
    private readonly removedInTxn: (seqs: number[]) => void,
  ) {}

  /**
   * Inside a write: removes messages (ascending sequences) from their blocks, each block written
   * again without them or removed when emptied.
   */
  private removeMessagesInTxn(seqs: number[]): void {
    this.removedInTxn(seqs);
    let i = 0;
    while (i < seqs.length) {
      const block = this.reads.blockOf(seqs[i]);
      if (block === undefined || block.lastSeq < seqs[i]) { i++; continue; }
      const gone = new Set<number>();
      while (i < seqs.length && seqs[i] <= block.lastSeq) gone.add(seqs[i++]);
      const kept: BlockEntry[] = [];
      for (let j = 0; j < block.count; j++) {
        if (!gone.has(block.seqs[j])) kept.push({ seq: block.seqs[j], topicId: block.topicIds[j], message: inputOf(block.values(j)) });
      }
      this.reads.forgetBlock(block.key);
      if (kept.length === block.count) continue;
      if (kept.length === 0) {
        this.log.remove(block.key);
        continue;
      }
      // The key stays (a block's key is where lookups of its sequences land), its first entry may go.
      this.log.put(block.key, encodeBlock(kept, 0, kept.length, block.key));
    }
  }

  /**
   * Removes a deleted topic's messages (index and log), PURGE_CHUNK per commit, so a topic of
   * millions of messages never holds the event loop (the broker shares it). Its mark goes with
   * the last chunk; a purge cut short by a close or a crash goes on at the next open.
   */
  purge(topicId: number): Promise<void> {
    this.purging = this.purging.then(async () => {
      for (let more = true; more && !this.closing;) {
        more = await this.env.write(() => {
          const removed = this.topicIndex.removeInTxn(topicId, MAX_SEQ, PURGE_CHUNK);
          this.removeMessagesInTxn(removed);
          if (removed.length < PURGE_CHUNK) this.env.catalog.remove(['purge', topicId]);
          return removed.length === PURGE_CHUNK;
        });
        this.reads.forgetBlocks(); // a reader may have cached a block as it was before this commit
      }
    }).catch(() => undefined); // an environment closed meanwhile: the mark stays, the next open goes on
    return this.purging;
  }

  /** Removes durable messages whose topic was deleted while they were appended (with the purges: `purged()` waits for it too). */
  removeOrphans(seqs: number[]): void {
    if (this.closing) return;
    this.purging = this.purging
      .then(() => this.env.write(() => this.removeMessagesInTxn(seqs)))
      .then(() => this.reads.forgetBlocks(), () => undefined);
  }

  /**
   * Applies a `topic.trim` entry: removes a topic's messages up to a sequence (retention),
   * PURGE_CHUNK per commit like a purge. Trims run one after another; a close stops one after its
   * current chunk (it resolves with what it removed: the rest stays, to be trimmed by the next run).
   */
  trim(topic: string, upToSequence: number, keep?: number): Promise<number> {
    const run = this.trimming.then(async () => {
      const info = this.catalog.topics.get(topic);
      const upTo = Math.floor(Number(upToSequence));
      if (!info || !(upTo >= 1)) return 0;
      const { topicId } = info;
      let removed = 0;
      for (let more = true; more && !this.closing;) {
        more = await this.env.write(() => {
          // The topic may have been deleted (and its purge begun) since: its messages are not ours.
          if (this.catalog.topicsById.get(topicId) !== info) return false;
          const gone = this.topicIndex.removeInTxn(topicId, upTo, PURGE_CHUNK, keep);
          this.removeMessagesInTxn(gone);
          // The next sequence is the last block's last sequence + 1 on open: keep it when the newest go.
          if (gone.length > 0) this.env.catalog.put(['log-seq'], this.nextSeq());
          removed += gone.length;
          return gone.length === PURGE_CHUNK;
        });
        this.reads.forgetBlocks(); // a reader may have cached a block as it was before this commit
      }
      return removed;
    });
    this.trimming = run.catch(() => 0);
    return run;
  }

  /** Resolves when the purges scheduled so far have finished (or stopped at a close). */
  async purged(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve)); // a delete schedules its purge on the next turn
    await this.purging;
  }

  /** Stops purging and trimming after the current chunk; resolves when both have stopped. */
  async close(): Promise<void> {
    this.closing = true;
    await this.purging;
    await this.trimming;
  }
}
