/**
 * The one way a protocol logs a client in with a name and password: REST Basic auth, the
 * `createSession` action, MQTT CONNECT. It answers a recently verified pair from the accounts'
 * cache; otherwise it refuses (TOO_MANY_FAILED_LOGINS) while the account name or the remote
 * address is backing off after failures (login-throttle.ts), else checks the password in the
 * bounded hashing pool (an unknown account costs the same check; a name no account can have is
 * refused without one) and counts the outcome.
 * Addresses many clients share (a reverse proxy's) count per account only: one client's
 * failures must not lock every other client out.
 */
import { EngineError } from '../errors';
import { isAccountName, type Accounts } from './accounts';
import type { LoginThrottle } from './login-throttle';
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
  constructor(private readonly accounts: Accounts, private readonly throttle: LoginThrottle, sharedAddresses: readonly string[] = []) {
    this.sharedAddresses = new Set(sharedAddresses.map(normalizeAddress));
  }

  async authenticate(attempt: LoginAttempt): Promise<Principal> {
    // A name no account can have is counted per address only (it would just grow the table).
    const accountKey = isAccountName(attempt.username) ? `account:${attempt.username.toLowerCase()}` : undefined;
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
      const principal = await this.accounts.verifyCredentials(attempt.username, attempt.password);
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
}

/** An IPv4 client of a dual-stack listener shows as `::ffff:a.b.c.d`: one key for both forms. */
function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address.toLowerCase();
}
