/**
 * An HTTP `Authorization` header as the engine reads it: `Basic` with an account's name and
 * password (through the kernel's login guard: throttled after failures, counted), or `Bearer`
 * with a live JSON-action session token. REST reads it per request with its own memo of the
 * connection (plugins/rest/basic-auth.ts); other HTTP endpoints (GET /metrics) call
 * `principalOfHeader`.
 */
import type { Engine } from '../../kernel/engine';
import type { Principal } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';

/** `[name, password]` from an `Authorization: Basic …` header, or undefined. */
export function parseBasic(header: string | undefined): [string, string] | undefined {
  if (!header) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function parseBearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return /^\s*bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/**
 * Who the header names. Throws BAD_CREDENTIALS (401) for a missing or malformed header, a wrong
 * password or a token that is not live, TOO_MANY_FAILED_LOGINS (429) while the name or address
 * backs off.
 */
export async function principalOfHeader(engine: Engine, header: string | undefined, address: string | undefined): Promise<Principal> {
  const token = parseBearer(header);
  if (token !== undefined) {
    const session = engine.apiSessions.findByToken(token);
    if (!session) throw new EngineError('BAD_CREDENTIALS');
    engine.apiSessions.use(token);
    return engine.accounts.principal(session.account);
  }
  const credentials = parseBasic(header);
  if (!credentials) throw new EngineError('BAD_CREDENTIALS');
  return engine.logins.authenticate({ username: credentials[0], password: credentials[1], address });
}
