/**
 * The topic name rule, defined once: MQTT (PUBLISH, will topics), the mq actions and the message
 * log's store all check topic names with it, so a topic one of them takes is never one another
 * refuses (docs/mqtt.md, "Topic names").
 */

/**
 * The most UTF-8 bytes a topic name may have: what the message log stores (its catalog and
 * integration tables hold topics up to this length). MQTT's own limit is 65,535; the 35 bytes
 * between are refused as a topic this server does not accept (MQTT 5 reason 0x90).
 */
export const MAX_TOPIC_NAME_BYTES = 65_500;

/**
 * true when `topic` has more than MAX_TOPIC_NAME_BYTES UTF-8 bytes. A UTF-16 unit is at most
 * 3 UTF-8 bytes, so short topics (nearly all) are answered without counting bytes.
 */
export function topicNameTooLong(topic: string): boolean {
  return topic.length * 3 > MAX_TOPIC_NAME_BYTES && Buffer.byteLength(topic, 'utf8') > MAX_TOPIC_NAME_BYTES;
}

/**
 * What is wrong with a topic name as MQTT forms it, or null: at least one character
 * [MQTT-4.7.3-1], no wildcards [MQTT-3.3.2-2], no NUL [MQTT-4.7.3-2], valid Unicode (an unpaired
 * surrogate has no UTF-8 form [MQTT-1.5.4-1]). A topic with one of these problems is malformed.
 */
export function topicNameFormProblem(topic: string): string | null {
  if (topic.length === 0) return 'a topic name must not be empty';
  if (topic.includes('+') || topic.includes('#')) return 'a topic name must not contain wildcards';
  if (topic.includes('\u0000')) return 'a topic name must not contain NUL';
  if (!topic.isWellFormed()) return 'a topic name must be valid Unicode (it holds an unpaired surrogate)';
  return null;
}

/** The rule: what is wrong with a topic name (its form, then its length), or null when it is one. */
export function topicNameProblem(topic: string): string | null {
  const problem = topicNameFormProblem(topic);
  if (problem !== null) return problem;
  if (topicNameTooLong(topic)) return `a topic name must not exceed ${MAX_TOPIC_NAME_BYTES.toLocaleString('en-US')} bytes`;
  return null;
}
