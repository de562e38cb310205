/**
 * A request body as text, only when its bytes are UTF-8. fastify's `parseAs: 'string'` decodes
 * bytes that are not UTF-8 as U+FFFD, so a value the client never sent would be stored. JSON text
 * is UTF-8 (RFC 8259 §8.1): a body that is not is refused as not JSON (MALFORMED_JSON, 400), as
 * REST and the actions refuse any other body that is not JSON. Their body parsers read bytes
 * (`parseAs: 'buffer'`) and call this.
 */
import { isUtf8 } from 'node:buffer';
import { EngineError } from '../../kernel/errors';

/** The body's text; throws MALFORMED_JSON when its bytes are not UTF-8. */
export function utf8BodyText(body: Buffer | string): string {
  if (typeof body === 'string') return body;
  if (!isUtf8(body)) throw new EngineError('MALFORMED_JSON', { reason: `the body is not valid UTF-8 (first bad byte at offset ${firstInvalidByte(body)})` });
  return body.toString('utf8');
}

/** Offset of the first byte that does not belong to a valid UTF-8 sequence (the body is known not UTF-8). */
function firstInvalidByte(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const size = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (size === 0 || i + size > bytes.length || !isUtf8(bytes.subarray(i, i + size))) return i;
    i += size;
  }
  return i;
}
