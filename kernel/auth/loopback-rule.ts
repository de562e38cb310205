/**
 * The loopback rule: while `admin` has the well-known default password, the server is reachable
 * from this machine only. The kernel decides the host once, at start, before any listener opens;
 * every listener (HTTP, HTTPS and the MQTT ones) binds to `engine.listenHost`. A password
 * change while running never moves a listener: a restart applies it.
 *
 * So that the rule cannot be undone while running, `admin`'s password cannot be set back to the
 * default while the server listens on every interface by its own choice (`listening_host` null).
 * An explicit `listening_host` is the operator's decision and is used as given.
 */
import { EngineError } from '../errors';
import { DEFAULT_ADMIN, DEFAULT_ADMIN_PASSWORD } from './accounts';

export const LOOPBACK_HOST = '127.0.0.1';
export const EVERY_INTERFACE = '0.0.0.0';

export interface ListenDecision {
  host: string;
  /** Said in the log at start when the default password limits or endangers the server. */
  warning?: string;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export class LoopbackRule {
  private decided?: ListenDecision;

  constructor(private readonly configuredHost: string | null) {}

  /** Decides the host every listener binds to; called once at start. */
  decide(adminHasDefaultPassword: boolean): ListenDecision {
    if (this.decided) throw new Error('the listening host is decided once, at start');
    this.decided = decideListenHost(this.configuredHost, adminHasDefaultPassword);
    return this.decided;
  }

  /** The host decided at start. */
  get host(): string {
    if (!this.decided) throw new Error('the listening host is decided at start, before listeners open');
    return this.decided.host;
  }

  /**
   * Refuses `admin`'s default password while the server listens on every interface by its own
   * choice; returns a warning for the log when an explicit `listening_host` exposes it.
   */
  checkPasswordChange(account: string, password: string): string | undefined {
    if (account !== DEFAULT_ADMIN || password !== DEFAULT_ADMIN_PASSWORD || !this.decided || isLoopback(this.decided.host)) return undefined;
    if (this.configuredHost !== null) {
      return `admin has the default password again and listening_host is ${this.configuredHost}: change the password (admin alterAccount)`;
    }
    throw new EngineError('INVALID_PARAMETER', {
      param: 'password',
      reason: 'the server listens on every interface, so admin cannot have the well-known default password (restart on loopback first, or set listening_host)',
    });
  }
}

export function decideListenHost(configured: string | null, adminHasDefaultPassword: boolean): ListenDecision {
  if (configured) {
    const warning = adminHasDefaultPassword && !isLoopback(configured)
      ? `admin still has the default password and listening_host is ${configured}: change the password (admin alterAccount)`
      : undefined;
    return { host: configured, warning };
  }
  if (adminHasDefaultPassword) {
    return { host: LOOPBACK_HOST, warning: `admin still has the default password: listening on loopback (${LOOPBACK_HOST}) only; change it and restart to listen on every interface` };
  }
  return { host: EVERY_INTERFACE };
}
