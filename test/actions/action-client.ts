/** Helpers for the action tests: a server, one-call envelopes, sessions. */
import assert from 'node:assert/strict';
import { call, startServer, type HttpResult, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import type { Clock } from '../../kernel/clock';

/** A real server with the actions plugin (with storage and the data commands unless told otherwise). */
export function startActionServer(overrides: Partial<Settings> = {}, withStorage = true, options: { clock?: Clock } = {}): Promise<TestServer> {
  const plugins = withStorage ? ['storage-lmdb', 'data', 'http', 'actions'] : ['http', 'actions'];
  return startServer({ plugins, ...overrides }, options);
}

export function post(server: TestServer, body: unknown, headers?: Record<string, string>): Promise<HttpResult> {
  return call('POST', `${server.http}/api`, { body, auth: null, headers });
}

/** Sends an envelope; asserts HTTP 200 and returns the response envelope. */
export async function send(server: TestServer, envelope: Record<string, unknown>): Promise<any> {
  const response = await post(server, envelope);
  assert.equal(response.status, 200, response.text);
  return response.json;
}

/** Sends an envelope and asserts success (errorCode 0); returns `result`. */
export async function ok(server: TestServer, envelope: Record<string, unknown>): Promise<any> {
  const response = await send(server, envelope);
  assert.equal(response.errorCode, 0, `${String(envelope.action)}: ${response.errorMessage}`);
  assert.equal(response.errorMessage, '');
  return response.result;
}

/** Sends an envelope and asserts the error code; returns the response envelope. */
export async function fails(server: TestServer, envelope: Record<string, unknown>, errorCode: number): Promise<any> {
  const response = await send(server, envelope);
  assert.equal(response.errorCode, errorCode, `${String(envelope.action)}: expected ${errorCode}, got ${response.errorCode} ${response.errorMessage}`);
  assert.equal(typeof response.errorMessage, 'string');
  assert.notEqual(response.errorMessage, '');
  return response;
}

export async function login(server: TestServer, username = 'admin', password = 'ADMIN', params: Record<string, unknown> = {}): Promise<string> {
  const result = await ok(server, { api: 'admin', action: 'createSession', params: { username, password, ...params } });
  return result.authToken as string;
}

/** An admin-api envelope. */
export function admin(action: string, authToken: string | undefined, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'admin', action, params, authToken, ...extra };
}

/** A db-api envelope. */
export function db(action: string, authToken: string | undefined, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'db', action, params, authToken, ...extra };
}
