/**
 * Catching up with the stream's tail on demand (the command bus's ReplicaCatchUp): a command that
 * found nothing where another node may just have written asks for it, so a table created through
 * one node can be used at once through another (docs/cluster.md, "Reading your writes").
 */
import type { ReplicaCatchUp } from '../../kernel/bus/command-bus';
import { STREAM, type ClusterLink } from './stream';
import type { StreamApplier } from './stream-applier';

export function streamCatchUp(link: ClusterLink, applier: StreamApplier, timeoutMs: number): ReplicaCatchUp {
  return {
    async catchUp() {
      try {
        const info = await link.jsm.streams.info(STREAM);
        // reached() also waits until what was applied is durable, and so visible to reads.
        await withTimeout(applier.reached(info.state.last_seq), timeoutMs);
        return true;
      } catch {
        // No quorum, or this node is behind for longer than a request may wait.
        return false;
      }
    },
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('catch-up timed out')), ms);
    promise.then(() => { clearTimeout(timer); resolve(); }, (error: unknown) => { clearTimeout(timer); reject(error); });
  });
}
