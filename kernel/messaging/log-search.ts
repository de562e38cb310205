/** Searches over the message log port that its users share (the mq actions, the message core). */
import type { LoggedMessage, MessageLogPort } from '../storage/message-log-port';

/** The first sequence of the topic whose createTs is at or after `since` (undefined: none). */
export function firstSince(log: MessageLogPort, topic: string, since: string): number | undefined {
  const first = log.readTopic(topic, { limit: 1 })[0];
  const last = log.readTopic(topic, { limit: 1, reverse: true })[0];
  if (!first || !last || last.createTs < since) return undefined;
  if (first.createTs >= since) return first.sequence;
  // P(s) = "the first message at or after s was created at or after since" is monotone in s;
  // P(lo) is false and P(hi) true throughout.
  const at = (s: number): LoggedMessage => log.readTopic(topic, { from: s, limit: 1 })[0];
  let lo = first.sequence;
  let hi = last.sequence;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid).createTs >= since) hi = mid;
    else lo = mid;
  }
  return at(hi).sequence;
}
