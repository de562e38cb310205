/** Positions in the log the mq actions take: `startFrom` (getMessagesFromMqTopic, alterMqSession) and `endBefore`. */
import { EngineError } from '../../../kernel/errors';
import { parseTimestamp } from '../../../lib/values/timestamps';

/** A message id (integer or digits) or an ISO 8601 date-time; undefined when the value is neither. */
function idOrTime(value: unknown): number | { since: string } | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^[0-9]{1,16}$/.test(text)) return Number(text);
  const since = parseTimestamp(text);
  return since === null ? undefined : { since };
}

/** The spec's startFrom: head, tail, an ISO 8601 date-time, or a message id (integer or digits). */
export function startFrom(value: unknown): 'head' | 'tail' | number | { since: string } {
  if (value === undefined || value === null) return 'tail';
  if (typeof value === 'number' && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new EngineError('INVALID_PARAMETER', { param: 'startFrom', reason: 'a message id is a non-negative integer' });
  }
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (lower === 'head' || lower === 'tail') return lower;
  const bound = idOrTime(value);
  if (bound === undefined) {
    throw new EngineError('INVALID_PARAMETER', { param: 'startFrom', reason: `expected "head", "tail", an ISO 8601 date-time or a message id, not ${JSON.stringify(value)}` });
  }
  return bound;
}

/** `endBefore` of getMessagesFromMqTopic: a message id (integer or digits) or an ISO 8601 date-time. */
export function endBefore(value: unknown): number | { since: string } {
  const bound = idOrTime(value);
  if (bound === undefined) throw new EngineError('INVALID_PARAMETER', { param: 'endBefore', reason: 'expected a message id or an ISO 8601 date-time' });
  return bound;
}
