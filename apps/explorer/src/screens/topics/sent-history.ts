/** The payloads sent from the Publish tab, newest first, kept in localStorage (at most 25, no repeats). */
import type { PublishDraft } from './data.js';

export interface SentPayload {
  topic: string;
  payload: string;
  payloadType: PublishDraft['payloadType'];
  time: string;
}

const STORAGE_KEY = 'engine.explorer.sentPayloads';
const KEEP = 25;
/** Payloads above this size are sent but not kept (localStorage holds a few MB in all). */
const MAX_KEPT_CHARS = 16 * 1024;

export function sentHistory(): SentPayload[] {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]') as unknown;
    return Array.isArray(value) ? value.filter((entry): entry is SentPayload => typeof entry?.topic === 'string' && typeof entry?.payload === 'string') : [];
  } catch {
    return [];
  }
}

/** Adds a sent payload at the top (an equal earlier entry moves up); answers the new list. */
export function rememberSent(entry: SentPayload): SentPayload[] {
  const list = sentHistory();
  if (entry.payload.length > MAX_KEPT_CHARS) return list;
  const kept = [entry, ...list.filter((old) => old.topic !== entry.topic || old.payload !== entry.payload || old.payloadType !== entry.payloadType)].slice(0, KEEP);
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(kept));
  } catch {
    // Storage full or refused: the message was sent; only its history entry is not kept.
  }
  return kept;
}
