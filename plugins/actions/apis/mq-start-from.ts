/** `startFrom` of the mq actions that read the log (getMessagesFromMqTopic, alterMqSession). */
import { EngineError } from '../../../kernel/errors';
import { parseTimestamp } from '../../data/values/wire-format';

/** The spec's startFrom: head, tail, an ISO 8601 date-time, or a message id (integer or digits). */
export function startFrom(value: unknown): 'head' | 'tail' | number | { since: string } {
  if (value === undefined || value === null) return 'tail';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new EngineError('INVALID_PARAMETER', { param: 'startFrom', reason: 'a message id is a non-negative integer' });
    return value;
  }
  if (typeof value !== 'string') throw new EngineError('INVALID_PARAMETER', { param: 'startFrom', reason: 'expected "head", "tail", an ISO 8601 date-time or a message id' });
  const text = value.trim();
  const lower = text.toLowerCase();
  if (lower === 'head' || lower === 'tail') return lower;
  if (/^[0-9]{1,16}$/.test(text)) return Number(text);
  const since = parseTimestamp(text);
  if (since === null) throw new EngineError('INVALID_PARAMETER', { param: 'startFrom', reason: `expected "head", "tail", an ISO 8601 date-time or a message id, not ${JSON.stringify(value)}` });
  return { since };
}

/** `endBefore` of getMessagesFromMqTopic: a message id (integer or digits) or an ISO 8601 date-time. */
export function endBefore(value: unknown): number | { since: string } {
  let bound: ReturnType<typeof startFrom> | null = null;
  try {
    if (!(typeof value === 'string' && /^(head|tail)$/i.test(value.trim()))) bound = startFrom(value);
  } catch {
    bound = null;
  }
  if (bound === null || typeof bound === 'string') {
    throw new EngineError('INVALID_PARAMETER', { param: 'endBefore', reason: 'expected a message id or an ISO 8601 date-time' });
  }
  return bound;
}
