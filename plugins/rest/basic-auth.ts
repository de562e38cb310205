/**
 * HTTP Basic authentication for every REST route. A missing or invalid credential answers 401
 * with `WWW-Authenticate: Basic realm="engine"` and the error body; a valid one gives the request
 * its command context `{ principal, origin: 'rest' }`. Accounts cache verified credentials
 * (`credential_cache_seconds`), so scrypt runs once per account and password, not per request.
 * Uncached credentials go through the kernel's login guard with the client's address: after
 * repeated failures it answers 429 with `Retry-After`.
 *
 * `Authorization: Bearer <authToken>` with a live JSON-action session token is accepted too (the
 * explorer's API console has a token, not the password); any other Bearer value is a bad credential
 * like a wrong password (401, 12033, the Basic challenge).
 *
 * Over HTTPS with `tls_client_certificates` on, a verified client certificate logs the request in
 * as its account without any header (the kernel decides: kernel/auth/certificate-login.ts). A
 * Basic user name sent as well must name that account (its password is not checked); a Bearer
 * token must be live and of that account.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../../kernel/engine';
import type { CommandContext } from '../../kernel/bus/command';
import type { Principal } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import { replyRestError } from './reply-error';
import { parseBasic } from '../../lib/http/authorization-header';

const contexts = new WeakMap<FastifyRequest, CommandContext>();

/** The command context of an authenticated request (set by the onRequest hook). */
export function contextOf(request: FastifyRequest): CommandContext {
  const ctx = contexts.get(request);
  if (!ctx) throw new EngineError('BAD_CREDENTIALS');
  return ctx;
}

function unauthorized(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return replyRestError(reply, request, new EngineError('BAD_CREDENTIALS'));
}

/**
 * What a keep-alive connection last proved: clients repeat the same header on every request, so
 * the header string is compared instead of re-checking the password. Dropped when it expires or
 * when any account changes (password, roles, deletion).
 */
interface ConnectionMemo {
  header: string;
  ctx: CommandContext;
  accountsVersion: number;
  expiresAt: number;
}

const memos = new WeakMap<object, ConnectionMemo>();

/**
 * The onRequest hook. Callback style with a synchronous path for known credentials: a promise
 * per request is measurable here.
 */
export function basicAuth(engine: Engine) {
  const { accounts } = engine;
  const memoMs = Math.min(engine.settings.credential_cache_seconds, 60) * 1000;
  const certificates = engine.settings.tls_client_certificates === 'off' ? undefined : engine.certificates;
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const header = request.headers.authorization;
    const socket = request.raw.socket;
    if (certificates) {
      let principal: Principal | undefined;
      try {
        principal = certificates.authenticate(socket);
        if (principal && header !== undefined) principal = certificates.authenticate(socket, claimedAccount(engine, header));
      } catch (error) {
        replyRestError(reply, request, error);
        return;
      }
      if (principal) {
        contexts.set(request, { principal, origin: 'rest' });
        done();
        return;
      }
    }
    const memo = memos.get(socket);
    if (memo !== undefined && memo.header === header && memo.accountsVersion === accounts.version && memo.expiresAt > engine.clock.now()) {
      contexts.set(request, memo.ctx);
      done();
      return;
    }
    const bearer = header === undefined ? null : /^\s*bearer\s+(\S+)\s*$/i.exec(header);
    if (bearer) {
      // Anything but a live token is answered as any bad credential (401, 12033, the Basic challenge),
      // but another cluster node's token, which says where it lives (421, 12061).
      const session = engine.apiSessions.findByToken(bearer[1]);
      if (!session) {
        try {
          engine.nodeIds.checkElsewhere(bearer[1], 'action session');
        } catch (error) {
          replyRestError(reply, request, error);
          return;
        }
        unauthorized(request, reply);
        return;
      }
      engine.apiSessions.use(bearer[1]);
      contexts.set(request, { principal: accounts.principal(session.account), origin: 'rest' });
      done();
      return;
    }
    const credentials = parseBasic(header);
    if (!credentials) {
      unauthorized(request, reply);
      return;
    }
    const accept = (principal: Principal): void => {
      const ctx: CommandContext = { principal, origin: 'rest' };
      contexts.set(request, ctx);
      if (memoMs > 0) memos.set(socket, { header: header!, ctx, accountsVersion: accounts.version, expiresAt: engine.clock.now() + memoMs });
      done();
    };
    const cached = accounts.cachedPrincipal(credentials[0], credentials[1]);
    if (cached) {
      accept(cached);
      return;
    }
    engine.logins.authenticate({ username: credentials[0], password: credentials[1], address: socket.remoteAddress }).then(accept, (error: unknown) => {
      if (error instanceof EngineError && error.status === 401) {
        unauthorized(request, reply);
        return;
      }
      done(error as Error);
    });
  };
}

/**
 * The account an Authorization header names, for a request that also has a verified client
 * certificate: a Basic user name (its password is not checked), or a live Bearer token's account
 * (a dead token is refused as without a certificate). A header of neither form names none.
 */
function claimedAccount(engine: Engine, header: string): string | undefined {
  const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) {
    const session = engine.apiSessions.findByToken(bearer[1]);
    if (!session) throw new EngineError('BAD_CREDENTIALS');
    engine.apiSessions.use(bearer[1]);
    return session.account;
  }
  return parseBasic(header)?.[0];
}
