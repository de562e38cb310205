/**
 * The server's JSON-action interface (`POST /api`) for every screen. The token lives in
 * sessionStorage (one tab's login); an ended or expired session (12031) returns to the login screen.
 */
import { signal } from '@preact/signals';

export interface Login {
  token: string;
  account: string;
}

const STORAGE_KEY = 'engine.explorer.login';
/** The error code of an ended, expired or unknown token. */
export const INVALID_TOKEN = 12031;

function storedLogin(): Login | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Login | null;
    return value && typeof value.token === 'string' && typeof value.account === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** The logged-in account, or null (the app shows the login screen). */
export const login = signal<Login | null>(storedLogin());
/** Why the last session ended, shown on the login screen ("Your session expired"). */
export const loginNotice = signal<string>('');

/** Aborted when the login ends: requests carrying its token pass it, see `loginSignal`. */
let loginRequests = new AbortController();

/**
 * A signal that aborts when this login ends. A plain HTTP request (not a JSON action) made with the
 * token is answered 401 once the session has ended, and the browser logs that as an error; a
 * request aborted before the session ends is not answered at all.
 */
export function loginSignal(signal?: AbortSignal): AbortSignal {
  return signal ? AbortSignal.any([signal, loginRequests.signal]) : loginRequests.signal;
}

function setLogin(value: Login | null): void {
  if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(STORAGE_KEY);
  if (!value || value.token !== login.value?.token) {
    loginRequests.abort();
    loginRequests = new AbortController();
  }
  login.value = value;
}

export class ApiError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

export type ApiName = 'admin' | 'db' | 'mq';

/** One action; resolves to its `result`, rejects with an ApiError carrying the errorCode. */
export async function call<T = Record<string, unknown>>(api: ApiName, action: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Promise<T> {
  const token = login.value?.token;
  const response = await fetch('/api', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api, action, params, authToken: token }),
    signal,
  });
  const body = await response.json() as { result: T; errorCode: number; errorMessage: string };
  if (body.errorCode !== 0) {
    if (body.errorCode === INVALID_TOKEN && token !== undefined && login.value?.token === token) {
      loginNotice.value = 'Your session has ended or expired. Log in again.';
      setLogin(null);
    }
    throw new ApiError(body.errorCode, body.errorMessage);
  }
  return body.result;
}

export async function logIn(username: string, password: string): Promise<void> {
  const response = await fetch('/api', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api: 'admin', action: 'createSession', params: { username, password } }),
  });
  const body = await response.json() as { authToken: string; errorCode: number; errorMessage: string };
  if (body.errorCode !== 0) throw new ApiError(body.errorCode, body.errorMessage);
  loginNotice.value = '';
  setLogin({ token: body.authToken, account: username });
}

export async function logOut(): Promise<void> {
  const token = login.value?.token;
  // Leave first, so that the requests made with the token (the events stream, the overview's
  // history) are aborted before the token dies rather than answered 401.
  loginNotice.value = '';
  setLogin(null);
  if (token === undefined) return;
  try {
    await fetch('/api', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api: 'admin', action: 'deleteSession', authToken: token }),
    });
  } catch {
    // Unreachable server: the token expires there by itself; this tab has forgotten it.
  }
}

/** Message text of anything thrown, for error banners. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
