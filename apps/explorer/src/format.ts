/**
 * Shared formatting for every screen: counts, rates, durations, times, bytes, payloads and topic
 * links. Pure functions of their arguments (and the browser's locale for number grouping).
 */
import { formatHash } from './router.js';

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal1 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const decimal2 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

/** A count with thousands grouping ("12,345"); '—' for a missing value. */
export function formatCount(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? integer.format(value) : '—';
}

/** A number with up to two decimals for small values, one for tens, none above 100. */
export function formatNumber(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const size = Math.abs(value);
  return (size >= 100 ? integer : size >= 10 ? decimal1 : decimal2).format(value);
}

/** Messages (or anything) per second: "12.5/s". */
export function formatRate(perSecond: number | null | undefined): string {
  return typeof perSecond === 'number' && Number.isFinite(perSecond) ? `${formatNumber(perSecond)}/s` : '—';
}

/** A duration in seconds, two units at most: "3d 4h", "2h 5m", "4m 3s", "12s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return '—';
  const s = Math.floor(seconds);
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${rest}s`;
  return `${rest}s`;
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in binary units: "512 B", "1.5 KB", "12 MB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${formatNumber(value)} ${UNITS[unit]}`;
}

function toDate(time: string | number | Date | null | undefined): Date | null {
  if (time === null || time === undefined || time === '') return null;
  const date = time instanceof Date ? time : new Date(time);
  return Number.isNaN(date.getTime()) ? null : date;
}

const pad = (n: number | string, width = 2) => String(n).padStart(width, '0');

/** A time (ISO text, epoch milliseconds or Date) in local time: "2026-11-23 06:38:11.123". */
export function formatTime(time: string | number | Date | null | undefined, withMilliseconds = false): string {
  const date = toDate(time);
  if (!date) return '—';
  const text = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return withMilliseconds ? `${text}.${pad(date.getMilliseconds(), 3)}` : text;
}

/** How long ago: "just now", "12s ago", "3m 4s ago"; `now` for tests. */
export function formatAgo(time: string | number | Date | null | undefined, now = Date.now()): string {
  const date = toDate(time);
  if (!date) return '—';
  const seconds = (now - date.getTime()) / 1000;
  if (seconds < 1) return 'just now';
  return `${formatDuration(seconds)} ago`;
}

/** The hash of a topic's page on the Topics screen: `#/topics/<levels>` (each level encoded). */
export function topicHref(topic: string): string {
  return formatHash({ screen: 'topics', path: topic.split('/') });
}

/**
 * A message payload as text. `pretty`: JSON values (and strings holding JSON) indented; raw: the
 * payload as sent (JSON values compact). Binary payloads stay in their binaryFormat (hex/base64),
 * a byte array is shown as hex.
 */
export function formatPayload(payload: unknown, pretty: boolean): string {
  if (payload === undefined) return '';
  if (Array.isArray(payload) && payload.every((b) => typeof b === 'number')) {
    return payload.map((b) => pad((b as number).toString(16))).join(pretty ? ' ' : '');
  }
  if (typeof payload === 'string') {
    if (!pretty) return payload;
    const trimmed = payload.trim();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return payload;
      }
    }
    return payload;
  }
  return pretty ? JSON.stringify(payload, null, 2) : JSON.stringify(payload);
}

/** A one-line preview of a payload, at most `length` characters. */
export function payloadPreview(payload: unknown, length = 80): string {
  const text = formatPayload(payload, false).replace(/\s+/g, ' ');
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/** The bytes of a binary payload given as hex, base64 or a byte array; null when it is not one. */
export function payloadBytes(payload: unknown, binaryFormat: string | undefined): Uint8Array | null {
  if (Array.isArray(payload)) return payload.every((b) => typeof b === 'number') ? Uint8Array.from(payload as number[]) : null;
  if (typeof payload !== 'string') return null;
  if (binaryFormat === 'hex') {
    if (payload.length % 2 !== 0 || /[^0-9a-f]/i.test(payload)) return null;
    const bytes = new Uint8Array(payload.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(payload.slice(i * 2, i * 2 + 2), 16);
    return bytes;
  }
  if (binaryFormat === 'base64') {
    try {
      return Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    } catch {
      return null;
    }
  }
  return null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A binary payload as text when its bytes are valid UTF-8 without control characters (tabs and
 * line ends allowed): MQTT clients often send text without the payload format indicator.
 */
export function binaryAsText(payload: unknown, binaryFormat: string | undefined): string | null {
  const bytes = payloadBytes(payload, binaryFormat);
  if (!bytes) return null;
  try {
    const text = strictUtf8.decode(bytes);
    return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? null : text;
  } catch {
    return null;
  }
}
