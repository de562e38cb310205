/** A tiny REST client over test/helpers/server.ts for the REST tests. */
import assert from 'node:assert/strict';
import { call, startServer, type HttpResult, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';

export const PREFIX = '/engine/api/v1';
export const REST_PLUGINS = ['storage-lmdb', 'data', 'http', 'rest'];

export type Auth = [string, string] | null;

export interface RestClient {
  base: string;
  get(path: string, auth?: Auth): Promise<HttpResult>;
  post(path: string, body?: unknown, auth?: Auth): Promise<HttpResult>;
  put(path: string, body?: unknown, auth?: Auth): Promise<HttpResult>;
  patch(path: string, body?: unknown, auth?: Auth): Promise<HttpResult>;
  del(path: string, auth?: Auth): Promise<HttpResult>;
}

export function restClient(baseUrl: string): RestClient {
  const base = `${baseUrl}${PREFIX}`;
  const send = (method: string, path: string, body: unknown, auth: Auth | undefined) =>
    call(method, `${base}${path}`, { ...(body === undefined ? {} : { body }), ...(auth === undefined ? {} : { auth }) });
  return {
    base,
    get: (path, auth) => send('GET', path, undefined, auth),
    post: (path, body, auth) => send('POST', path, body, auth),
    put: (path, body, auth) => send('PUT', path, body, auth),
    patch: (path, body, auth) => send('PATCH', path, body, auth),
    del: (path, auth) => send('DELETE', path, undefined, auth),
  };
}

export function startRestServer(overrides: Partial<Settings> = {}): Promise<TestServer> {
  return startServer({ plugins: REST_PLUGINS, ...overrides });
}

/** Asserts a 200 answer and returns its JSON body. */
export function ok(result: HttpResult): any {
  assert.equal(result.status, 200, `expected 200, got ${result.status}: ${result.text}`);
  return result.json;
}

/** Asserts an error answer: status, the error body shape, and optionally its errorCode and a message pattern. */
export function fails(result: HttpResult, status: number, errorCode?: number, message?: RegExp): void {
  assert.equal(result.status, status, `expected ${status}, got ${result.status}: ${result.text}`);
  assert.equal(typeof result.json?.errorCode, 'number', `no errorCode in ${result.text}`);
  assert.equal(typeof result.json?.errorMessage, 'string', `no errorMessage in ${result.text}`);
  if (errorCode !== undefined) assert.equal(result.json.errorCode, errorCode, result.text);
  if (message) assert.match(result.json.errorMessage, message);
}
