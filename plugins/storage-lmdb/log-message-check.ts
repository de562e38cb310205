/** The checks of a message before it is appended to the log (message-log.ts): a refused message makes no entry. */
import { EngineError } from '../../kernel/errors';
import type { MessageInput } from '../../kernel/storage/storage-port';
import { isCanonicalTimestamp } from '../../lib/values/timestamps';

export function invalidMessage(reason: string): EngineError {
  return new EngineError('INVALID_PARAMETER', { param: 'messages', reason });
}

/** The last create_ts found canonical: the messages of a turn share one. */
let checkedCreateTs = '';

export function checkMessage(message: MessageInput): void {
  if (message === null || typeof message !== 'object') throw invalidMessage('a message is an object');
  // create_ts never goes back along the log (compared as text), so one bad value would stick.
  if (message.createTs !== checkedCreateTs) {
    if (typeof message.createTs !== 'string' || !isCanonicalTimestamp(message.createTs)) {
      throw invalidMessage('createTs must be a canonical timestamp (YYYY-MM-DDThh:mm:ss.sss)');
    }
    checkedCreateTs = message.createTs;
  }
  if (message.qos !== undefined && message.qos !== 0 && message.qos !== 1 && message.qos !== 2) throw invalidMessage('qos is 0, 1 or 2');
  const payload = message.payload;
  if (payload === null || typeof payload !== 'object' || typeof payload.type !== 'string') {
    throw invalidMessage('payload must be a variant value');
  }
  const value = (payload as { value: unknown }).value;
  const valid = payload.type === 'binary' ? value instanceof Uint8Array
    : payload.type === 'boolean' ? typeof value === 'boolean'
      : (payload.type === 'json' || payload.type === 'string') && typeof value === 'string';
  if (!valid) throw invalidMessage('payload must be a variant value');
  if (message.publisher !== undefined && message.publisher !== null && typeof message.publisher !== 'string') {
    throw invalidMessage('publisher is a string');
  }
}
