/**
 * The console's history of sent requests in localStorage. Entries hold the editor's text with the
 * token masked (never the token itself), the HTTP status and the time taken.
 */
import { TOKEN_PLACEHOLDER } from './templates.js';

export interface HistoryEntry {
  /** The template key (`db.listTables`, `GET /engine/api/v1/...`). */
  key: string;
  label: string;
  text: string;
  at: string;
  status: number;
  ms: number;
  /** The envelope's errorCode (actions), when the answer had one. */
  errorCode?: number;
}

const STORAGE_KEY = 'engine.explorer.console.history';
const LIMIT = 50;

export function readHistory(): HistoryEntry[] {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]') as unknown;
    return Array.isArray(value) ? value.filter((entry): entry is HistoryEntry => !!entry && typeof (entry as HistoryEntry).text === 'string') : [];
  } catch {
    return [];
  }
}

/** Adds an entry (newest first); `secret` is masked wherever it appears. */
export function addHistory(entry: HistoryEntry, secret: string | undefined): HistoryEntry[] {
  const masked = secret ? { ...entry, text: entry.text.split(secret).join(TOKEN_PLACEHOLDER) } : entry;
  const entries = [masked, ...readHistory()].slice(0, LIMIT);
  writeHistory(entries);
  return entries;
}

export function writeHistory(entries: HistoryEntry[]): void {
  try {
    if (entries.length === 0) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, JSON.stringify(entries));
  } catch {
    // Storage full or disabled: the history is only a convenience.
  }
}
