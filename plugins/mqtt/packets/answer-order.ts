/**
 * SUBACK and UNSUBACK in the order their packets came, when a SUBACK has to wait: in a cluster a
 * shared subscription counts once its node's membership announcement is applied from the stream
 * (MessageCorePort.sharedMembershipSettled, docs/cluster.md "Shared subscriptions"). Packets read
 * meanwhile are handled at once; only their SUBACK / UNSUBACK queue behind the waiting one.
 * Nothing waits on a single node or for a subscription that is not shared.
 */
import type { Connection } from '../connection';

/** The answer each connection still has to send last, while one waits. */
const pending = new WeakMap<Connection, Promise<void>>();

/** Sends `answer` once `ready` (if any) and every answer queued before it on the connection are done. */
export function answerInOrder(connection: Connection, ready: Promise<void> | undefined, answer: () => void): void {
  const before = pending.get(connection);
  if (ready === undefined && before === undefined) return answer();
  const done = Promise.all([before, ready]).then(() => {
    if (pending.get(connection) === done) pending.delete(connection);
    // A connection closed meanwhile is not answered (send is a no-op then; retained messages are not sent).
    if (connection.state === 'connected') answer();
  });
  pending.set(connection, done);
}
