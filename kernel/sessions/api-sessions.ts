/**
 * authToken sessions of the JSON-action interface: random 192-bit tokens, idle expiry.
 * Kept in memory: a restart ends every session (clients create a new one).
 */
import { randomBytes } from 'node:crypto';
import { EngineError } from '../errors';

export interface ApiSessionSettings {
  description: string;
  defaultApi: string;
  defaultDatabaseName: string;
  defaultOwnerName: string;
  defaultBinaryFormat: 'hex' | 'base64' | 'byteArray';
  defaultVariantFormat: 'json' | 'binary' | 'string' | 'variantObject';
  defaultNumberFormat: 'number' | 'string';
  defaultResponseOptions: Record<string, unknown>;
  idleConnectionTimeoutSeconds: number;
  /** How long the session's cursors live unused. */
  idleCursorTimeoutSeconds: number;
}

export interface ApiSession {
  readonly authToken: string;
  readonly account: string;
  readonly createdAt: Date;
  lastUsedAt: Date;
  settings: ApiSessionSettings;
}

export class ApiSessions {
  private readonly sessions = new Map<string, ApiSession>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly endListeners: Array<(session: ApiSession) => void> = [];

  constructor(sweepIntervalMs = 30_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  create(account: string, settings: ApiSessionSettings): ApiSession {
    const now = new Date();
    const session: ApiSession = { authToken: randomBytes(24).toString('base64url'), account, createdAt: now, lastUsedAt: now, settings };
    this.sessions.set(session.authToken, session);
    return session;
  }

  /** The live session of a token, marked as used; throws INVALID_TOKEN when unknown or idle too long. */
  use(authToken: unknown): ApiSession {
    const session = typeof authToken === 'string' ? this.sessions.get(authToken) : undefined;
    if (!session) throw new EngineError('INVALID_TOKEN');
    const now = Date.now();
    if (now - session.lastUsedAt.getTime() > session.settings.idleConnectionTimeoutSeconds * 1000) {
      this.end(session.authToken);
      throw new EngineError('INVALID_TOKEN');
    }
    session.lastUsedAt = new Date(now);
    return session;
  }

  peek(authToken: string): ApiSession | undefined {
    return this.sessions.get(authToken);
  }

  list(account?: string): ApiSession[] {
    const all = [...this.sessions.values()];
    return account ? all.filter((s) => s.account === account) : all;
  }

  end(authToken: string): boolean {
    const session = this.sessions.get(authToken);
    if (!session) return false;
    this.sessions.delete(authToken);
    for (const listener of this.endListeners) listener(session);
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

  sweep(now = Date.now()): void {
    for (const session of this.sessions.values()) {
      if (now - session.lastUsedAt.getTime() > session.settings.idleConnectionTimeoutSeconds * 1000) this.end(session.authToken);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sessions.clear();
  }
}
