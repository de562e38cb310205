/**
 * Catching up with the stream's tail on demand (the command bus's ReplicaCatchUp): a command that
 * found nothing where another node may just have written asks for it, so a table created through
 * one node can be used at once through another (docs/cluster.md, "Reading your writes"). With
 * `cluster_read_consistency: "latest"`, every read waits for it first ("Reading the latest").
 */
import type { ReplicaCatchUp } from '../../kernel/bus/command-bus';
import { EngineError } from '../../kernel/errors';
import { STREAM, type ClusterLink } from './stream';
import type { StreamApplier } from './stream-applier';
import { withDeadline } from './deadline';

/**
 * The stream's last sequence, asked of its leader. Callers share requests, but only one sent after
 * they called: a request already on its way may have been answered before a write acknowledged
 * since, so a caller arriving meanwhile waits for the next one (at most one in flight).
 */
export class StreamTail {
  private inFlight: Promise<number> | null = null;
  private queued: Promise<number> | null = null;

  constructor(private readonly link: Pick<ClusterLink, 'jsm'>, private readonly timeoutMs: number) {}

  latest(): Promise<number> {
    if (this.inFlight === null) return this.send();
    this.queued ??= this.inFlight.then(() => undefined, () => undefined).then(() => {
      this.queued = null;
      return this.send();
    });
    return this.queued;
  }

  private send(): Promise<number> {
    // Bounded: a request the library leaves hanging must not hold every later read behind it.
    const asked = withDeadline(this.timeoutMs, 'the stream', () => this.link.jsm.streams.info(STREAM)).then((info) => info.state.last_seq);
    this.inFlight = asked;
    const done = (): void => { if (this.inFlight === asked) this.inFlight = null; };
    asked.then(done, done);
    return asked;
  }
}

export function streamCatchUp(link: ClusterLink, applier: StreamApplier, timeoutMs: number, readLatest: boolean): ReplicaCatchUp {
  const tail = new StreamTail(link, timeoutMs);
  /** Resolves once everything up to the tail, as asked after this call, is applied and durable (so visible to reads). */
  const reachTail = async (): Promise<void> => {
    const started = performance.now();
    const sequence = await tail.latest();
    await applier.reachedWithin(sequence, Math.max(0, timeoutMs - (performance.now() - started)));
  };
  return {
    async catchUp() {
      try {
        await reachTail();
        return true;
      } catch {
        // No quorum, or this node is behind for longer than a request may wait.
        return false;
      }
    },
    ...(readLatest ? {
      async readLatest() {
        try {
          await reachTail();
        } catch (error) {
          throw new EngineError('CLUSTER_NOT_CURRENT', { reason: String((error as Error)?.message ?? error).slice(0, 200) });
        }
      },
    } : {}),
  };
}
