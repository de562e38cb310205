/**
 * MQTT topic filters (MQTT 3.1.1 §4.7 / MQTT 5 §4.7, shared subscriptions §4.8.2): the one place
 * their rules live, for the kernel's grants, the message core, MQTT and the mq actions alike. The
 * topic name rule is kernel/topic-name.ts.
 */

const SHARE_PREFIX = '$share/';

/** `$share/<ShareName>/<filter>` split in its parts, or null when `filter` is not a shared one. */
export function parseSharedFilter(filter: string): { share: string; filter: string } | null {
  if (!filter.startsWith(SHARE_PREFIX)) return null;
  const slash = filter.indexOf('/', SHARE_PREFIX.length);
  if (slash < 0) return { share: filter.slice(SHARE_PREFIX.length), filter: '' };
  return { share: filter.slice(SHARE_PREFIX.length, slash), filter: filter.slice(slash + 1) };
}

/**
 * What is wrong with a topic filter, shared ones included, or null when it is valid.
 * A ShareName is 1+ chars without `/`, `+`, `#` and must be followed by `/` and a filter
 * [MQTT-4.8.2-1], [MQTT-4.8.2-2].
 */
export function topicFilterProblem(filter: string): string | null {
  const shared = parseSharedFilter(filter);
  if (shared === null) return plainFilterProblem(filter);
  if (shared.share.length === 0) return 'a shared subscription needs a share name';
  if (/[+#]/.test(shared.share)) return 'a share name must not contain wildcards';
  if (!filter.includes('/', SHARE_PREFIX.length)) return 'a shared subscription needs a topic filter after the share name';
  const problem = plainFilterProblem(shared.filter);
  return problem === null ? null : `in a shared subscription, ${problem}`;
}

/** A topic filter: `#` only last and alone in its level, `+` alone in its level [MQTT-4.7.1-2], [MQTT-4.7.1-3]. */
function plainFilterProblem(filter: string): string | null {
  if (filter.length === 0) return 'a topic filter must not be empty';
  if (filter.includes('\u0000')) return 'a topic filter must not contain NUL';
  const levels = filter.split('/');
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i];
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return '"#" must be the last level and alone in it';
    if (level.includes('+') && level !== '+') return '"+" must be alone in its level';
  }
  return null;
}

/** Does `filter` match the topic name? Topics starting with `$` don't match leading wildcards [MQTT-4.7.2-1]. */
export function topicMatches(filter: string, topic: string): boolean {
  if (topic.startsWith('$') && (filter.startsWith('#') || filter.startsWith('+'))) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/**
 * Does every topic matched by `inner` also match `outer`? (grants on filters) A grant whose first
 * level is a wildcard never reaches `$` topics (`#` does not grant `$SYS/...`) [MQTT-4.7.2-1].
 */
export function filterCovers(outer: string, inner: string): boolean {
  if (inner.startsWith('$') && (outer.startsWith('#') || outer.startsWith('+'))) return false;
  const o = outer.split('/');
  const n = inner.split('/');
  for (let i = 0; i < o.length; i++) {
    if (o[i] === '#') return true;
    if (i >= n.length) return false;
    if (n[i] === '#') return false;
    if (o[i] === '+') continue;
    if (o[i] !== n[i]) return false;
  }
  return o.length === n.length;
}
