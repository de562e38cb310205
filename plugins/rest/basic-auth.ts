/**
 * HTTP Basic authentication for every REST route. A missing or invalid credential answers 401
 * with `WWW-Authenticate: Basic realm="engine"` and the error body; a valid one gives the request
 * its command context `{ principal, origin: 'rest' }`. Accounts cache verified credentials
 * (`credential_cache_seconds`), so scrypt runs once per account and password, not per request.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../../kernel/engine';
import type { CommandContext } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';

export const WWW_AUTHENTICATE = 'Basic realm="engine", charset="UTF-8"';

const contexts = new WeakMap<FastifyRequest, CommandContext>();

/** The command context of an authenticated request (set by the onRequest hook). */
export function contextOf(request: FastifyRequest): CommandContext {
  const ctx = contexts.get(request);
  if (!ctx) throw new EngineError('BAD_CREDENTIALS');
  return ctx;
}

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

function unauthorized(reply: FastifyReply): FastifyReply {
  const error = new EngineError('BAD_CREDENTIALS');
  return reply.code(401).header('www-authenticate', WWW_AUTHENTICATE).send({ errorCode: error.code, errorMessage: error.message });
}

/**
 * The onRequest hook. Callback style with a synchronous path for cached credentials: most
 * requests of a client repeat the same header, and a promise per request is measurable here.
 */
export function basicAuth(engine: Engine) {
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const credentials = parseBasic(request.headers.authorization);
    if (!credentials) {
      unauthorized(reply);
      return;
    }
    const principal = engine.accounts.cachedPrincipal(credentials[0], credentials[1]);
    if (principal) {
      contexts.set(request, { principal, origin: 'rest' });
      done();
      return;
    }
    engine.accounts.authenticate(credentials[0], credentials[1]).then((verified) => {
      contexts.set(request, { principal: verified, origin: 'rest' });
      done();
    }, (error: unknown) => {
      if (error instanceof EngineError && error.status === 401) unauthorized(reply);
      else done(error as Error);
    });
  };
}
