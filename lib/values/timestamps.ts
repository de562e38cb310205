/**
 * Dates, times and timestamps in canonical form ('YYYY-MM-DD', 'hh:mm:ss.ttt',
 * 'YYYY-MM-DDThh:mm:ss.ttt', no zone: kernel/storage/types.ts): recognizing, parsing the forms
 * clients send, and converting to and from epoch milliseconds. The one place these rules live:
 * value decoding (wire-format.ts), index keys, filters and the message log's create_ts use them.
 * Pure module, no I/O. See docs/values.md.
 */

const REST_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?$/;
const ZONE = /(?:Z|([+-])(\d{2}):?(\d{2}))$/i;
const TIMESTAMP_SPLIT = /^(\d{4}-\d{2}-\d{2}|\d{1,2}\/\d{1,2}\/\d{4})(?:(?:T|\s+)(.+))?$/i;

const MS_PER_DAY = 86_400_000;

function pad2(n: number): string { return n < 10 ? `0${n}` : String(n); }
function pad3(n: number): string { return n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n); }
function pad4(n: number): string { return n < 1000 ? String(n).padStart(4, '0') : String(n); }

function isLeapYear(y: number): boolean { return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0; }
function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : (m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31);
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The date `days` after 1970-01-01. */
export function civilFromDays(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

function canonicalDate(y: number, m: number, d: number): string | null {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return null;
  return `${pad4(y)}-${pad2(m)}-${pad2(d)}`;
}

// Fast paths: text already in canonical form is checked by character codes (no regex, no
// intermediate strings) and returned as is; anything else takes the general parsers below.

/** The digit at `i` (0-9), or -1. */
function digitAt(text: string, i: number): number {
  const c = text.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** Two digits at `i` as a number, or -1. */
function twoDigitsAt(text: string, i: number): number {
  const a = digitAt(text, i);
  const b = digitAt(text, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/** true when `text` holds a real canonical date `CCYY-MM-DD` at `at` (year 0001-9999). */
function isCanonicalDateAt(text: string, at: number): boolean {
  if (text.charCodeAt(at + 4) !== 45 || text.charCodeAt(at + 7) !== 45) return false; // '-'
  const hi = twoDigitsAt(text, at);
  const lo = twoDigitsAt(text, at + 2);
  if (hi < 0 || lo < 0) return false;
  const y = hi * 100 + lo;
  const m = twoDigitsAt(text, at + 5);
  const d = twoDigitsAt(text, at + 8);
  return y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/** true when `text` holds a real canonical time `hh:mm:ss.ttt` at `at`. */
function isCanonicalTimeAt(text: string, at: number): boolean {
  if (text.charCodeAt(at + 2) !== 58 || text.charCodeAt(at + 5) !== 58 || text.charCodeAt(at + 8) !== 46) return false; // ':' ':' '.'
  const h = twoDigitsAt(text, at);
  const min = twoDigitsAt(text, at + 3);
  const s = twoDigitsAt(text, at + 6);
  return h >= 0 && h <= 23 && min >= 0 && min <= 59 && s >= 0 && s <= 59
    && digitAt(text, at + 9) >= 0 && digitAt(text, at + 10) >= 0 && digitAt(text, at + 11) >= 0;
}

/** true when `text` is a canonical date `CCYY-MM-DD` of a real day. */
export function isCanonicalDate(text: string): boolean {
  return text.length === 10 && isCanonicalDateAt(text, 0);
}

/** true when `text` is a canonical time `hh:mm:ss.ttt`. */
export function isCanonicalTime(text: string): boolean {
  return text.length === 12 && isCanonicalTimeAt(text, 0);
}

/** true when `text` is a canonical timestamp `CCYY-MM-DDThh:mm:ss.ttt` of a real day. */
export function isCanonicalTimestamp(text: string): boolean {
  return text.length === 23 && text.charCodeAt(10) === 84 /* T */ && isCanonicalDateAt(text, 0) && isCanonicalTimeAt(text, 11);
}

/** A date in REST (`MM/DD/CCYY`, one- or two-digit month and day) or ISO (`CCYY-MM-DD`) form → canonical, or null. */
export function parseDate(text: string): string | null {
  if (isCanonicalDate(text)) return text;
  let match = ISO_DATE.exec(text);
  if (match) return canonicalDate(Number(match[1]), Number(match[2]), Number(match[3]));
  match = REST_DATE.exec(text);
  if (match) return canonicalDate(Number(match[3]), Number(match[1]), Number(match[2]));
  return null;
}

/** Milliseconds of the day of `h|hh:mm[:ss[.t…]]`, or -1. Fractions beyond milliseconds are cut. */
function timeMs(text: string): number {
  const match = TIME.exec(text);
  if (!match) return -1;
  const h = Number(match[1]);
  const min = Number(match[2]);
  const s = match[3] === undefined ? 0 : Number(match[3]);
  const ms = match[4] === undefined ? 0 : Number(match[4].slice(0, 3).padEnd(3, '0'));
  if (h > 23 || min > 59 || s > 59) return -1;
  return ((h * 60 + min) * 60 + s) * 1000 + ms;
}

function formatTimeMs(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const min = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${pad2(h)}:${pad2(min)}:${pad2(s)}.${pad3(ms % 1000)}`;
}

/** A time `h|hh:mm:ss.ttt` (milliseconds, and seconds, optional; a trailing `Z` is ignored) → canonical, or null. */
export function parseTime(text: string): string | null {
  if (isCanonicalTime(text)) return text;
  const ms = timeMs(text.endsWith('Z') || text.endsWith('z') ? text.slice(0, -1) : text);
  return ms < 0 ? null : formatTimeMs(ms);
}

/**
 * A timestamp → canonical, or null. Accepts `MM/DD/CCYY h:mm:ss.ttt`, `CCYY-MM-DDThh:mm:ss.ttt`
 * (or a space for `T`), a date alone (midnight), and a trailing `Z` or `±hh:mm` offset (converted
 * to UTC, which is what zone-less timestamps are taken to be).
 */
export function parseTimestamp(text: string): string | null {
  if (isCanonicalTimestamp(text)) return text;
  const match = TIMESTAMP_SPLIT.exec(text);
  if (!match) return null;
  const date = parseDate(match[1]);
  if (date === null) return null;
  let timeText = match[2];
  if (timeText === undefined) return `${date}T00:00:00.000`;
  let offsetMs = 0;
  const zone = ZONE.exec(timeText);
  if (zone) {
    if (zone[1] !== undefined) {
      const oh = Number(zone[2]);
      const om = Number(zone[3]);
      if (oh > 23 || om > 59) return null;
      offsetMs = (oh * 60 + om) * 60_000 * (zone[1] === '-' ? -1 : 1);
    }
    timeText = timeText.slice(0, zone.index);
  }
  const ms = timeMs(timeText);
  if (ms < 0) return null;
  if (offsetMs === 0) return `${date}T${formatTimeMs(ms)}`;
  const total = timestampToMs(`${date}T${formatTimeMs(ms)}`) - offsetMs;
  const canonical = msToTimestamp(total);
  // The offset can carry the instant out of years 0001-9999, which no canonical form holds.
  return isCanonicalTimestamp(canonical) ? canonical : null;
}

/** Days since 1970-01-01 of a canonical date (negative before). */
export function dateToDays(date: string): number {
  return daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

/** Milliseconds of the day of a canonical time. */
export function timeToMs(time: string): number {
  return ((Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5))) * 60 + Number(time.slice(6, 8))) * 1000
    + Number(time.slice(9, 12));
}

/** Milliseconds since 1970-01-01T00:00:00.000 of a canonical timestamp. */
export function timestampToMs(timestamp: string): number {
  return dateToDays(timestamp) * MS_PER_DAY + timeToMs(timestamp.slice(11));
}

/** The canonical timestamp of milliseconds since the epoch. */
export function msToTimestamp(ms: number): string {
  const days = Math.floor(ms / MS_PER_DAY);
  const { y, m, d } = civilFromDays(days);
  return `${pad4(y)}-${pad2(m)}-${pad2(d)}T${formatTimeMs(ms - days * MS_PER_DAY)}`;
}

/** The canonical timestamp of a JS Date (UTC). */
export function dateToTimestamp(date: Date): string {
  return msToTimestamp(date.getTime());
}
