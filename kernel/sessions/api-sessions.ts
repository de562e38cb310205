/**
 * authToken sessions of the JSON-action interface: random 192-bit tokens, idle expiry (capped by
 * `session_max_idle_timeout_seconds`) and an absolute lifetime (`session_max_lifetime_seconds`),
 * both on the engine's clock (kernel/idle-expiry.ts).
 *
 * A token is a secret: only its holder ever sees it. Everything else names a session by its `id`,
 * a random non-secret id (listSessions, describeSessions, `ctx.sessionId`, cursor owners).
 * Kept in memory: a restart ends every session (clients create a new one).
 */
import { randomBytes } from 'node:crypto';
import { NodeBoundIds } from '../node-bound';
import { EngineError } from '../errors';
import type { IdleExpiry, IdleRegistry } from '../idle-expiry';

export interface ApiSessionSettings {
  description: string;
  defaultApi: string;
  defaultDatabaseName: string;
  defaultOwnerName: string;
  defaultBinaryFormat: 'hex' | 'base64' | 'byteArray';
  defaultVariantFormat: 'json' | 'binary' | 'string' | 'variantObject';
  defaultNumberFormat: 'number' | 'string';
  /** publishMessagesToMq's `validateMqttPayload` when the call leaves it out. */
  defaultValidateMqttPayload: boolean;
  defaultResponseOptions: Record<string, unknown>;
  idleConnectionTimeoutSeconds: number;
  /** How long the session's cursors live unused. */
  idleCursorTimeoutSeconds: number;
}

export interface ApiSession {
  /** The secret the client sends; shown only to the client that created the session. */
  readonly authToken: string;
  /** Names the session everywhere else; knowing it grants nothing. */
  readonly id: string;
  readonly account: string;
  /** Clock time of creation and of the last request. */
  readonly createdAt: number;
  lastUsedAt: number;
  settings: ApiSessionSettings;
}

export interface SessionLimits {
  /** Cap on a session's idleConnectionTimeoutSeconds (0: no cap). */
  maxIdleSeconds: number;
  /** How long a session lives after its creation, however often it is used (0: no limit). */
  maxLifetimeSeconds: number;
}

export class ApiSessions {
  private readonly byToken: IdleRegistry<ApiSession>;
  private readonly byId = new Map<string, ApiSession>();
  private readonly endListeners: Array<(session: ApiSession) => void> = [];

  constructor(
    expiry: IdleExpiry,
    private readonly limits: SessionLimits,
    /** In a cluster, tokens carry this node's name (another node answers NODE_BOUND). */
    private readonly nodeIds = new NodeBoundIds(null),
  ) {
    this.byToken = expiry.registry<ApiSession>({
      idleTimeoutMs: (session) => session.settings.idleConnectionTimeoutSeconds * 1000,
      endsAt: (session) => (limits.maxLifetimeSeconds > 0 ? session.createdAt + limits.maxLifetimeSeconds * 1000 : undefined),
      expired: (session) => this.ended(session),
    });
  }

  create(account: string, settings: ApiSessionSettings): ApiSession {
    const now = this.byToken.now();
    const session: ApiSession = {
      authToken: this.nodeIds.make(randomBytes(24).toString('base64url')),
      id: randomBytes(16).toString('base64url'),
      account,
      createdAt: now,
      lastUsedAt: now,
      settings: this.capped(settings),
    };
    this.byToken.add(session.authToken, session);
    this.byId.set(session.id, session);
    return session;
  }

  /** Replaces a session's settings (the idle timeout capped like at creation). */
  alter(session: ApiSession, settings: ApiSessionSettings): void {
    session.settings = this.capped(settings);
  }

  /**
   * The live session of a token, marked as used; throws INVALID_TOKEN when unknown, idle too long or
   * past its lifetime, NODE_BOUND when another node of the cluster made it.
   */
  use(authToken: unknown): ApiSession {
    const session = typeof authToken === 'string' ? this.byToken.get(authToken) : undefined;
    if (!session) {
      this.nodeIds.checkElsewhere(authToken, 'action session');
      throw new EngineError('INVALID_TOKEN');
    }
    this.byToken.touch(session);
    return session;
  }

  /** The live session of a token, not marked as used. */
  findByToken(authToken: string): ApiSession | undefined {
    return this.byToken.get(authToken);
  }

  /** The live session of a session id, not marked as used. */
  findById(sessionId: string): ApiSession | undefined {
    const session = this.byId.get(sessionId);
    return session && this.byToken.get(session.authToken);
  }

  /** Live sessions (of one account when named). */
  list(account?: string): ApiSession[] {
    const live: ApiSession[] = [];
    for (const [token, session] of this.byToken.all()) {
      if ((account === undefined || session.account === account) && this.byToken.get(token)) live.push(session);
    }
    return live;
  }

  end(authToken: string): boolean {
    const session = this.byToken.delete(authToken);
    if (!session) return false;
    this.ended(session);
    return true;
  }

  /** Ends every session of an account (password change, account deletion). */
  endAccount(account: string): void {
    for (const session of this.list(account)) this.end(session.authToken);
  }

  /** Lets capabilities release what a session held (cursors, transactions). */
  onEnd(listener: (session: ApiSession) => void): void {
    this.endListeners.push(listener);
  }

  close(): void {
    for (const [token] of this.byToken.all()) this.byToken.delete(token);
    this.byId.clear();
  }

  private capped(settings: ApiSessionSettings): ApiSessionSettings {
    const cap = this.limits.maxIdleSeconds;
    return cap > 0 && settings.idleConnectionTimeoutSeconds > cap ? { ...settings, idleConnectionTimeoutSeconds: cap } : settings;
  }

  private ended(session: ApiSession): void {
    this.byId.delete(session.id);
    for (const listener of this.endListeners) listener(session);
  }
}
