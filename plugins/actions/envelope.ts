/**
 * The action envelope: parsing the request `{api, action, params, responseOptions, requestId,
 * authToken, apiVersion, debug}` and building the response `{authToken, result, requestId,
 * errorCode, errorMessage}` and its text. Errors take their wire form in error-response.ts.
 */
import { EngineError } from '../../kernel/errors';
import { jsonDepthExceeds } from '../../lib/values/json-depth';
import { holdsNumber, requestIdText } from './request-id-text';
import { JsonText } from './json-text';

export interface Envelope {
  api?: string;
  action: string;
  params: Record<string, unknown>;
  /** The raw responseOptions (validated later, once the session's defaults are known). */
  responseOptions?: unknown;
  hasRequestId: boolean;
  requestId?: unknown;
  authToken?: string;
  apiVersion?: string;
  debug?: string;
}

export interface ActionResponse {
  authToken: string;
  result: unknown;
  requestId?: unknown;
  errorCode: number;
  errorMessage: string;
  debugInfo?: unknown;
}

/** What can be learnt from a body even when it is not a valid envelope (for the error response). */
export interface EnvelopeEcho {
  hasRequestId: boolean;
  requestId?: unknown;
  /** The requestId exactly as the request wrote it, when parsing may have changed it (a number in it). */
  requestIdText?: string;
  authToken?: string;
}

/** A request body as the content-type parser hands it on: the parsed value and its requestId text. */
export interface ActionBody {
  value: unknown;
  requestIdText?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How deep a requestId may nest (it is echoed back as given). */
export const MAX_REQUEST_ID_DEPTH = 64;
/** How deep a request may nest to be shown back by `debug: "max"`. */
const MAX_DEBUG_ECHO_DEPTH = 256;

export function echoOf({ value: body, requestIdText }: ActionBody): EnvelopeEcho {
  if (!isObject(body)) return { hasRequestId: false };
  const hasRequestId = Object.prototype.hasOwnProperty.call(body, 'requestId');
  // A requestId too deep to echo safely is not echoed (parseEnvelope refuses it).
  const echoable = !hasRequestId || !jsonDepthExceeds(body.requestId, MAX_REQUEST_ID_DEPTH);
  return {
    hasRequestId: hasRequestId && echoable,
    requestId: echoable ? body.requestId : undefined,
    requestIdText: echoable ? requestIdText : undefined,
    authToken: typeof body.authToken === 'string' ? body.authToken : undefined,
  };
}

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new EngineError('INVALID_PARAMETER', { param: key, reason: 'expected a string' });
  return value;
}

/** Validates the envelope's shape; params and responseOptions contents are checked later. */
export function parseEnvelope(body: unknown): Envelope {
  if (!isObject(body)) throw new EngineError('INVALID_PARAMETER', { param: 'request', reason: 'the request body must be a JSON object' });
  if (body.action === undefined || body.action === null || body.action === '') throw new EngineError('MISSING_PARAMETER', { param: 'action' });
  if (typeof body.action !== 'string') throw new EngineError('INVALID_PARAMETER', { param: 'action', reason: 'expected a string' });
  if (jsonDepthExceeds(body.requestId, MAX_REQUEST_ID_DEPTH)) {
    throw new EngineError('INVALID_PARAMETER', { param: 'requestId', reason: `nested deeper than ${MAX_REQUEST_ID_DEPTH} levels` });
  }
  let params: Record<string, unknown> = {};
  if (body.params !== undefined && body.params !== null) {
    if (!isObject(body.params)) throw new EngineError('INVALID_PARAMETER', { param: 'params', reason: 'expected an object' });
    params = body.params;
  }
  const api = optionalString(body, 'api');
  const authToken = optionalString(body, 'authToken');
  const apiVersion = optionalString(body, 'apiVersion');
  const debug = optionalString(body, 'debug');
  return {
    api: api === '' ? undefined : api,
    action: body.action,
    params,
    responseOptions: body.responseOptions,
    hasRequestId: Object.prototype.hasOwnProperty.call(body, 'requestId'),
    requestId: body.requestId,
    authToken: authToken === '' ? undefined : authToken,
    apiVersion,
    debug,
  };
}

export function successResponse(echo: EnvelopeEcho, authToken: string | undefined, result: unknown): ActionResponse {
  return responseEnvelope(echo, authToken ?? '', result ?? {}, 0, '');
}

/** Properties in the specification's order; requestId only when the request had one. */
export function responseEnvelope(echo: EnvelopeEcho, authToken: string, result: unknown, errorCode: number, errorMessage: string): ActionResponse {
  return echo.hasRequestId
    ? { authToken, result, requestId: echo.requestId, errorCode, errorMessage }
    : { authToken, result, errorCode, errorMessage };
}

/**
 * The response as JSON text: JSON.stringify's, except that `requestId` is written as the request
 * wrote it when its text was kept (a number JSON.parse rounded comes back digit for digit), and a
 * result's `data` given as JsonText (json-text.ts) is written as that text.
 */
export function responseText(response: Record<string, unknown>, echo: EnvelopeEcho): string {
  const result = response.result;
  const dataText = isObject(result) && result.data instanceof JsonText;
  const idText = echo.requestIdText !== undefined && 'requestId' in response;
  if (!idText && !dataText) return JSON.stringify(response);
  return objectText(response, (key, value) => {
    if (key === 'requestId' && idText) return echo.requestIdText;
    if (key === 'result' && dataText) return objectText(value as Record<string, unknown>, (inner, data) => (inner === 'data' ? (data as JsonText).text : JSON.stringify(data)));
    return JSON.stringify(value);
  });
}

/** An object's JSON text, each member's value written by `member` (undefined leaves it out, as JSON.stringify does). */
function objectText(object: Record<string, unknown>, member: (key: string, value: unknown) => string | undefined): string {
  let text = '';
  for (const key of Object.keys(object)) {
    const json = member(key, object[key]);
    if (json !== undefined) text += `${text === '' ? '{' : ','}${JSON.stringify(key)}:${json}`;
  }
  return text === '' ? '{}' : `${text}}`;
}

/**
 * Drops `__proto__` keys and `constructor` keys holding a `prototype` (prototype poisoning, as
 * fastify's body parser refuses them). Any other `constructor` is data: a column may be named so.
 */
function dropPoisonKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) return undefined;
  return value;
}

/** true when `text` is empty or only JSON whitespace (space, tab, line feed, carriage return). */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9 && c !== 0xfeff && c !== 0xa0 && c !== 0x0b && c !== 0x0c
      && !(c >= 0x2000 && c <= 0x200a) && c !== 0x1680 && c !== 0x2028 && c !== 0x2029 && c !== 0x202f && c !== 0x205f && c !== 0x3000) {
      return false;
    }
  }
  return true;
}

/**
 * Parses a request body as JSON. Poisoning keys are dropped (dropPoisonKeys); the reviver only
 * runs when the text contains them (two substring searches, no regex, no copy of the text).
 */
export function parseJsonBody(text: string): unknown {
  if (isBlank(text)) throw new EngineError('MALFORMED_JSON', { reason: 'the request body is empty' });
  try {
    return text.indexOf('__proto__') !== -1 || text.indexOf('constructor') !== -1
      ? JSON.parse(text, dropPoisonKeys)
      : JSON.parse(text);
  } catch (error) {
    throw new EngineError('MALFORMED_JSON', { reason: (error as Error).message });
  }
}

/** Parses a request body and keeps its requestId's text when parsing may have changed it. */
export function parseActionBody(text: string): ActionBody {
  const value = parseJsonBody(text);
  if (!isObject(value) || !holdsNumber(value.requestId)) return { value };
  return { value, requestIdText: requestIdText(text) };
}

/** Removes the top-level properties named by `responseOptions.omit`. */
export function applyOmit(response: ActionResponse, omit: readonly string[]): Record<string, unknown> {
  if (omit.length === 0) return response as unknown as Record<string, unknown>;
  const shaped: Record<string, unknown> = { ...response };
  for (const name of omit) delete shaped[name];
  return shaped;
}

/** The request as `debug: "max"` shows it back, with secrets hidden. */
export function redactedRequest(body: unknown): unknown {
  if (jsonDepthExceeds(body, MAX_DEBUG_ECHO_DEPTH)) return `(not shown: nested deeper than ${MAX_DEBUG_ECHO_DEPTH} levels)`;
  if (!isObject(body)) return body;
  const copy: Record<string, unknown> = { ...body };
  if (typeof copy.authToken === 'string') copy.authToken = '********';
  if (isObject(copy.params)) {
    const params: Record<string, unknown> = { ...copy.params };
    for (const key of Object.keys(params)) if (/password/i.test(key)) params[key] = '********';
    copy.params = params;
  }
  return copy;
}
