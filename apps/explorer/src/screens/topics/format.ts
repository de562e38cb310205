/**
 * One message model for the Topics screen, whether it came from the message log
 * (getMessagesFromMqTopic with metadata and MQTT properties, binaryFormat base64) or from the live
 * MQTT tail; payload bytes and text views (pretty JSON, raw, hex, base64); JSON paths for charts.
 */
import type { StoredMessage, UserProperty } from '../../../../../lib/explorer/api-types.js';
import { jsonProblem, problemText } from '../../json-check.js';

/** A stored message as getMessagesFromMqTopic returns it (metadata, MQTT properties, base64), shared with the server. */
export type { StoredMessage, UserProperty } from '../../../../../lib/explorer/api-types.js';

export interface TopicMessage {
  /** Unique within a list (the log id, or a live sequence number). */
  key: string;
  /** The message log id (stored messages only). */
  id?: number;
  topic: string;
  /** When stored (ISO), or when received (live). */
  time: string;
  live: boolean;
  bytes: Uint8Array;
  /** The payload as UTF-8 text, or null when the bytes are not UTF-8. */
  text: string | null;
  /** The parsed JSON payload; `undefined` when the payload is not JSON. */
  json: unknown;
  qos: number;
  retain: boolean;
  contentType?: string;
  responseTopic?: string;
  correlationData?: Uint8Array;
  expirySeconds?: number;
  userProperties: UserProperty[];
  payloadFormatIndicator?: boolean;
  publisher?: string;
  expired?: boolean;
  /** The topic's transform fields (configureTopic transformSteps), computed by the server; stored messages only. */
  transformFields?: Record<string, unknown>;
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}

export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function bytesToHex(bytes: Uint8Array, spaced = false): string {
  const parts: string[] = new Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) parts[i] = bytes[i].toString(16).padStart(2, '0');
  return parts.join(spaced ? ' ' : '');
}

/**
 * The classic hex dump: an offset, 16 bytes in hex (a gap after 8) and their printable ASCII,
 * `00000000  7b 22 6e 22 3a 31 35 30  2c 22 70 72 65 73 73 75  |{"n":150,"pressu|`.
 * At most `limit` bytes (a 200 KB payload is 12,800 lines; the rest is counted).
 */
export function hexDump(bytes: Uint8Array, limit = 64 * 1024): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, limit);
  for (let offset = 0; offset < end; offset += 16) {
    let hex = '';
    let ascii = '';
    for (let i = 0; i < 16; i++) {
      if (i === 8) hex += ' ';
      if (offset + i < end) {
        const byte = bytes[offset + i];
        hex += `${byte.toString(16).padStart(2, '0')} `;
        ascii += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.';
      } else {
        hex += '   ';
      }
    }
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex} |${ascii}|`);
  }
  if (bytes.length > end) lines.push(`… ${(bytes.length - end).toLocaleString('en-US')} more bytes (Base64 or Copy shows them all)`);
  return lines.join('\n');
}

/** Bytes from hex digits (whitespace between them allowed), or a reason they are not hex. */
export function parseHexInput(text: string): Uint8Array | string {
  const digits = text.replace(/\s+/g, '');
  if (!/^[0-9a-fA-F]*$/.test(digits)) return 'Hex payloads hold only the digits 0-9 and a-f (spaces allowed).';
  if (digits.length % 2 !== 0) return 'Hex payloads need an even number of digits (two a byte).';
  return hexToBytes(digits);
}

/** Whether a text is base64 (standard alphabet, padded or not), or a reason it is not. */
export function checkBase64Input(text: string): string | null {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return 'Not base64: only A-Z, a-z, 0-9, + and /, with = at the end.';
  return null;
}

/** Where JSON text fails to parse, as "line L, column C: reason", or null when it parses. */
export function jsonError(text: string): string | null {
  const problem = jsonProblem(text);
  return problem ? problemText(problem) : null;
}

export function textToHex(text: string): string {
  return bytesToHex(utf8Bytes(text));
}

/**
 * The server's limit (docs/values.md, "JSON nested too deeply"): deeper JSON is shown as text,
 * since the views write a value back with JSON.stringify, which runs out of stack on it.
 */
const MAX_JSON_DEPTH = 512;

/** true when JSON text nests arrays/objects deeper than MAX_JSON_DEPTH (a scan, strings skipped). */
function nestsTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_JSON_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The JSON value of a text, or undefined when it is not JSON (plain words are not) or nests too deeply to show. */
export function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  const trimmed = text.trim();
  if (trimmed === '' || nestsTooDeep(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

export function fromStored(message: StoredMessage, topic: string): TopicMessage {
  let bytes: Uint8Array;
  if (message.binaryFormat !== undefined && typeof message.payload === 'string') {
    bytes = message.binaryFormat === 'hex' ? hexToBytes(message.payload) : base64ToBytes(message.payload);
  } else if (message.binaryFormat === 'byteArray' && Array.isArray(message.payload)) {
    bytes = Uint8Array.from(message.payload as number[]);
  } else if (typeof message.payload === 'string') {
    bytes = utf8Bytes(message.payload);
  } else {
    bytes = utf8Bytes(JSON.stringify(message.payload));
  }
  const text = message.binaryFormat === undefined && typeof message.payload !== 'string' ? JSON.stringify(message.payload) : decodeUtf8(bytes);
  const json = message.binaryFormat === undefined && typeof message.payload !== 'string' ? message.payload : parseJson(text);
  return {
    key: `id:${message.id}`,
    id: message.id,
    topic: message.topic ?? topic,
    time: message.timestamp,
    live: false,
    bytes,
    text,
    json,
    qos: message.qos ?? 0,
    retain: message.retain ?? false,
    contentType: message.contentType || undefined,
    responseTopic: message.responseTopic || undefined,
    // Read with binaryFormat base64: a string ('' when absent).
    correlationData: typeof message.correlationData === 'string' && message.correlationData ? base64ToBytes(message.correlationData) : undefined,
    expirySeconds: message.expirySeconds ?? undefined,
    userProperties: message.userProperties ?? [],
    payloadFormatIndicator: message.payloadFormatIndicator === null || message.payloadFormatIndicator === undefined ? undefined : Boolean(message.payloadFormatIndicator),
    publisher: message.publisher ?? undefined,
    expired: message.messageHasExpired,
    transformFields: message.transformFields,
  };
}

export function hexToBytes(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, '');
  const bytes = new Uint8Array(clean.length >> 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** Pretty JSON when the payload is JSON, else the text, else the spaced hex. */
export function prettyText(message: Pick<TopicMessage, 'json' | 'text' | 'bytes'>): string {
  if (message.json !== undefined) return JSON.stringify(message.json, null, 2);
  if (message.text !== null) return message.text;
  return bytesToHex(message.bytes, true);
}

/** One line for a table cell. */
export function preview(message: TopicMessage, max = 160): string {
  const text = message.text ?? `0x${bytesToHex(message.bytes.subarray(0, 64))}${message.bytes.length > 64 ? '…' : ''}`;
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: '2-digit', day: '2-digit' });
/** Formatted times by their ISO second: formatting is slow and a flood repeats the same seconds. */
const timeCache = new Map<string, string>();

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const key = iso.slice(0, 19);
  const cached = timeCache.get(key);
  if (cached !== undefined) return cached;
  const date = new Date(isoMillis(iso));
  if (Number.isNaN(date.getTime())) return iso;
  const today = dateFormat.format(new Date());
  const day = dateFormat.format(date);
  const text = day === today ? timeFormat.format(date) : `${day} ${timeFormat.format(date)}`;
  if (timeCache.size > 2000) timeCache.clear();
  timeCache.set(key, text);
  return text;
}

/** formatTime with the milliseconds: "14:46:13.184" (messages a few ms apart stay apart). */
export function formatTimeMillis(iso: string | null | undefined): string {
  if (!iso) return '—';
  const millis = isoMillis(iso);
  if (Number.isNaN(millis)) return iso;
  return `${formatTime(iso)}.${String(((millis % 1000) + 1000) % 1000).padStart(3, '0')}`;
}

/** Parses an ISO date-time as UTC when it carries no zone (the server's canonical form). */
export function isoMillis(iso: string): number {
  return new Date(iso.endsWith('Z') || /[+-]\d\d:\d\d$/.test(iso) ? iso : `${iso}Z`).getTime();
}

export function formatRate(perSecond: number | null | undefined): string {
  if (!perSecond) return '';
  if (perSecond >= 100) return `${Math.round(perSecond)}/s`;
  if (perSecond >= 1) return `${perSecond.toFixed(1)}/s`;
  return `${(perSecond * 60).toFixed(1)}/min`;
}

export function formatCount(count: number | null | undefined): string {
  if (count === null || count === undefined) return '';
  return count.toLocaleString('en-US');
}

type PathStep = string | number;

/** `temp`, `a.b[0]`, `["odd key"].x`, `[2]` → steps; throws on a malformed path. */
export function parseJsonPath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  const pattern = /\s*(?:\.?([A-Za-z_$][\w$-]*)|\[\s*(\d+)\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*'([^']*)'\s*\])/y;
  let at = 0;
  const text = path.trim();
  while (at < text.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match || match[0] === '') throw new Error(`Cannot read the JSON path at "${text.slice(at)}"`);
    if (match[1] !== undefined) steps.push(match[1]);
    else if (match[2] !== undefined) steps.push(Number(match[2]));
    else if (match[3] !== undefined) steps.push(JSON.parse(`"${match[3]}"`) as string);
    else steps.push(match[4]);
    at = pattern.lastIndex;
  }
  return steps;
}

/** A chart series names a transform field as `@name` (the server's column, not a payload path). */
export const TRANSFORM_PREFIX = '@';

/** What a series reads: a JSON path into the payload, or a transform field by name. */
export type SeriesSource = { path: PathStep[] } | { transformField: string };

export function seriesSource(series: string): SeriesSource {
  const text = series.trim();
  if (text.startsWith(TRANSFORM_PREFIX)) {
    const name = text.slice(TRANSFORM_PREFIX.length).trim();
    if (name === '') throw new Error('Name the transform field after @');
    return { transformField: name };
  }
  return { path: parseJsonPath(text) };
}

/** The number a series reads from a message, or null. */
export function seriesNumber(message: Pick<TopicMessage, 'json' | 'text' | 'transformFields'>, source: SeriesSource): number | null {
  if ('transformField' in source) return toNumber(message.transformFields?.[source.transformField]);
  return numberAt(message, source.path);
}

/** The number at a JSON path of a message (no path: the payload itself), or null. */
export function numberAt(message: Pick<TopicMessage, 'json' | 'text'>, steps: PathStep[]): number | null {
  let value: unknown = message.json !== undefined ? message.json : message.text;
  for (const step of steps) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string | number, unknown>)[step];
  }
  return toNumber(value);
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '') {
    const number = Number(value);
    return Number.isFinite(number) ? number : null;
  }
  return null;
}

/** The transform field names of some messages, in first-seen order (none on a topic without them). */
export function transformFieldNames(messages: ReadonlyArray<Pick<TopicMessage, 'transformFields'>>): string[] {
  const names = new Set<string>();
  for (const message of messages) for (const name of Object.keys(message.transformFields ?? {})) names.add(name);
  return [...names];
}

/** A transform field's value as one line: text as is, null as an em dash, the rest as JSON. */
export function transformValueText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
