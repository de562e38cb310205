/** The short text a topic tree row shows of a topic's last value (MQTT Explorer's preview). */
import type { VariantValue } from '../../kernel/storage/types';

export const PREVIEW_CHARS = 80;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Text as is, JSON compact, bytes as UTF-8 when they are, else as hex; at most PREVIEW_CHARS. */
export function previewOf(payload: VariantValue | Uint8Array): string {
  let text: string;
  if (payload instanceof Uint8Array) text = bytesText(payload);
  else if (payload.type === 'binary') text = bytesText(payload.value);
  else text = String(payload.value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

function bytesText(bytes: Uint8Array): string {
  const head = bytes.subarray(0, PREVIEW_CHARS * 4);
  try {
    return strictUtf8.decode(head);
  } catch {
    return `0x${Buffer.from(bytes.subarray(0, PREVIEW_CHARS / 2)).toString('hex')}`;
  }
}
