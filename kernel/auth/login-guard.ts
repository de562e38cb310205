/**
 * The one way a protocol logs a client in with a name and password: REST Basic auth, the
 * `createSession` action, MQTT CONNECT. It answers a recently verified pair from the accounts'
 * cache; otherwise it refuses (TOO_MANY_FAILED_LOGINS) while the account name or the remote
 * address is backing off after failures (login-throttle.ts), else checks the password in the
 * bounded hashing pool (an unknown account costs the same check; a name no account can have is
 * refused without one) and counts the outcome.
 * Addresses many clients share (a reverse proxy's) count per account only: one client's
 * failures must not lock every other client out.
 * In a cluster, a name and password refused here may be an account (or a password) another node
 * has just written and this node has not applied yet: the guard catches up with the replicated
 * log (shared by the logins waiting at the same time, login-catch-up.ts) and checks again when
 * the account changed meanwhile, before it counts a failure.
 */
import { EngineError } from '../errors';
import { isAccountName, type Accounts } from './accounts';
import type { LoginThrottle } from './login-throttle';
import type { LoginCatchUp } from './login-catch-up';
import type { Principal } from './principal';

export interface LoginAttempt {
  username: string;
  password: string;
  /** The client's address as the listener sees it (the TCP peer); absent for checks inside a session. */
  address?: string;
}

export class LoginGuard {
  private readonly sharedAddresses: Set<string>;
  /** Logins refused, read by the metrics at scrape time: a wrong name or password, or refused while backing off. */
  readonly failures = { badCredentials: 0, throttled: 0 };

  /** `sharedAddresses`: addresses many clients share (a reverse proxy), throttled per account only. */
  constructor(
    private readonly accounts: Accounts,
    private readonly throttle: LoginThrottle,
    sharedAddresses: readonly string[] = [],
    /** A replica's catch-up (a cluster): a refusal waits for it and checks again when the account changed. */
    private readonly replica?: LoginCatchUp,
  ) {
    this.sharedAddresses = new Set(sharedAddresses.map(normalizeAddress));
  }

  async authenticate(attempt: LoginAttempt): Promise<Principal> {
    // A name no account can have is counted per address only (it would just grow the table).
    const accountKey = isAccountName(attempt.username) ? `account:${attempt.username.toLowerCase()}` : undefined;
    // A catch-up started from now on has every account written before this login was sent.
    const ticket = this.replica?.ticket() ?? 0;
    const cached = this.accounts.cachedPrincipal(attempt.username, attempt.password);
    if (cached) {
      if (accountKey) this.throttle.succeeded(accountKey);
      return cached;
    }
    const keys: string[] = [];
    if (accountKey) keys.push(accountKey);
    const address = attempt.address === undefined ? undefined : normalizeAddress(attempt.address);
    if (address !== undefined && !this.sharedAddresses.has(address)) keys.push(`address:${address}`);
    const waitMs = this.throttle.waitMs(keys);
    if (waitMs > 0) {
      this.failures.throttled++;
      throw new EngineError('TOO_MANY_FAILED_LOGINS', { retryAfter: Math.ceil(waitMs / 1000) });
    }
    if (accountKey === undefined) {
      // No account can have this name (the name rules are public): refused without a hash, so a
      // flood of such names takes no hashing worker from real logins.
      this.throttle.failed(keys);
      this.failures.badCredentials++;
      throw new EngineError('BAD_CREDENTIALS');
    }
    try {
      const principal = await this.verifyCaughtUp(attempt.username, attempt.password, ticket);
      if (accountKey) this.throttle.succeeded(accountKey);
      return principal;
    } catch (error) {
      if (error instanceof EngineError && error.id === 'BAD_CREDENTIALS') {
        this.throttle.failed(keys);
        this.failures.badCredentials++;
      }
      throw error;
    }
  }

  /**
   * verifyCredentials; refused, after a catch-up with the replicated log, checked once more if the
   * account was written meanwhile (created, re-passworded: applied here during the check or the
   * catch-up). A wrong password for an account nobody changed costs one hash, not two.
   */
  private async verifyCaughtUp(username: string, password: string, ticket: number): Promise<Principal> {
    const before = this.accounts.recordOf(username);
    try {
      return await this.accounts.verifyCredentials(username, password);
    } catch (error) {
      if (this.replica === undefined || !(error instanceof EngineError) || error.id !== 'BAD_CREDENTIALS') throw error;
      await this.replica.catchUp(ticket);
      if (this.accounts.recordOf(username) === before) throw error;
      return this.accounts.verifyCredentials(username, password);
    }
  }
}

/** An IPv4 client of a dual-stack listener shows as `::ffff:a.b.c.d`: one key for both forms. */
function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address.toLowerCase();
}
