/**
 * The one way a protocol logs a client in with a TLS client certificate (MQTT over TLS and secure
 * WebSocket, HTTPS for REST, the actions and the explorer): the listener asks for a certificate
 * (`tls_client_certificates` `optional` or `required`) and checks its chain against
 * `tls_client_ca_file` and `tls_client_crl_file` without ending the handshake; this decides what
 * the outcome means, so every protocol refuses the same certificates for the same reasons.
 *
 * - No certificate: no login here (`optional`: the client logs in another way), or a refusal
 *   (`required`).
 * - A certificate whose chain did not verify (another CA, expired, not yet valid, revoked): refused.
 * - A verified one logs in the account that its `tls_certificate_account_field` names; the account
 *   must exist (accounts have no disabled state: delete the account or revoke the certificate).
 *   A user name the client also sends must name the same account; its password is not checked
 *   (docs/decisions.md, "Client certificates").
 *
 * A connection's certificate is judged once (kept per TLS socket); the account is looked up on each
 * use, so a deleted account or changed roles apply at once. Refusals are BAD_CERTIFICATE with a
 * reason the client may read; the log says why with the certificate's fingerprint, never its
 * subject when unverified, and nothing secret.
 */
import { TLSSocket, type PeerCertificate } from 'node:tls';
import type { Logger } from 'pino';
import { EngineError } from '../errors';
import type { Accounts } from './accounts';
import type { Principal } from './principal';

export type ClientCertificateMode = 'off' | 'optional' | 'required';

/** Which field of a verified certificate names the account (setting `tls_certificate_account_field`). */
export type CertificateAccountField = 'subject_cn' | 'subject_email' | 'san_email' | 'san_dns';

/** What a TLS connection's certificate came to: the account it names, no certificate, or a refusal. */
type Verdict =
  | { readonly kind: 'account'; readonly account: string; readonly fingerprint: string }
  | { readonly kind: 'none' }
  | { readonly kind: 'refused'; readonly error: EngineError };

const NO_CERTIFICATE: Verdict = Object.freeze({ kind: 'none' });

export class CertificateLogins {
  private readonly verdicts = new WeakMap<TLSSocket, Verdict>();

  constructor(
    private readonly accounts: Accounts,
    readonly mode: ClientCertificateMode,
    private readonly field: CertificateAccountField,
    private readonly log: Logger,
  ) {}

  /**
   * The principal a connection's client certificate logs in, for a socket of any listener:
   * undefined when certificates are off, the socket is not TLS, or (`optional`) the client sent
   * none. `claimedAccount`: a user name the client sent as well (MQTT CONNECT, HTTP Basic, the
   * account of its authToken). Throws BAD_CERTIFICATE.
   */
  authenticate(socket: unknown, claimedAccount?: string): Principal | undefined {
    if (this.mode === 'off' || !(socket instanceof TLSSocket)) return undefined;
    let verdict = this.verdicts.get(socket);
    if (verdict === undefined) {
      verdict = this.judge(socket);
      this.verdicts.set(socket, verdict);
    }
    if (verdict.kind === 'none') return undefined;
    if (verdict.kind === 'refused') throw verdict.error;
    const claimed = claimedAccount?.toLowerCase();
    if (claimed && claimed !== verdict.account) {
      this.log.info({ address: socket.remoteAddress, fingerprint: verdict.fingerprint, reason: 'other-account' }, 'client certificate refused: the user name names another account');
      throw refusal('the user name names another account than the certificate');
    }
    if (!this.accounts.has(verdict.account)) {
      this.log.info({ address: socket.remoteAddress, fingerprint: verdict.fingerprint, account: verdict.account, reason: 'unknown-account' }, 'client certificate refused: no such account');
      throw refusal(UNKNOWN_ACCOUNT);
    }
    return this.accounts.principal(verdict.account);
  }

  private judge(socket: TLSSocket): Verdict {
    const certificate = socket.getPeerCertificate();
    const address = socket.remoteAddress;
    if (!certificate || Object.keys(certificate).length === 0) {
      if (this.mode !== 'required') return NO_CERTIFICATE;
      this.log.info({ address, reason: 'no-certificate' }, 'client certificate refused: none was sent');
      return refused('this listener requires a client certificate');
    }
    const fingerprint = certificate.fingerprint256;
    if (!socket.authorized) {
      const code = errorCode(socket.authorizationError);
      const problem = chainProblem(code);
      // The subject of an unverified certificate is whatever its maker wrote: only the fingerprint is logged.
      this.log[problem.serverSide ? 'warn' : 'info']({ address, fingerprint, reason: code }, `client certificate refused: ${problem.text}`);
      return refused(problem.text);
    }
    const named = accountNamed(certificate, this.field);
    if (typeof named !== 'string') {
      this.log.info({ address, fingerprint, reason: 'no-account-field', field: this.field }, `client certificate refused: ${named.problem}`);
      return refused(named.problem);
    }
    return { kind: 'account', account: named.toLowerCase(), fingerprint };
  }
}

const UNKNOWN_ACCOUNT = 'it does not name an account that may log in';

function refusal(reason: string): EngineError {
  return new EngineError('BAD_CERTIFICATE', { reason });
}

function refused(reason: string): Verdict {
  return { kind: 'refused', error: refusal(reason) };
}

function errorCode(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return 'UNKNOWN';
}

/** What an OpenSSL verification error means to the client; `serverSide` when the server's CRL is at fault. */
function chainProblem(code: string): { text: string; serverSide?: boolean } {
  switch (code) {
    case 'CERT_HAS_EXPIRED':
      return { text: 'it has expired' };
    case 'CERT_NOT_YET_VALID':
      return { text: 'it is not valid yet' };
    case 'CERT_REVOKED':
      return { text: 'it has been revoked' };
    case 'UNABLE_TO_GET_CRL':
    case 'CRL_HAS_EXPIRED':
    case 'CRL_NOT_YET_VALID':
    case 'UNABLE_TO_DECRYPT_CRL_SIGNATURE':
    case 'CRL_SIGNATURE_FAILURE':
      return { text: 'its revocation status cannot be checked', serverSide: true };
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'CERT_SIGNATURE_FAILURE':
      return { text: 'it is not signed by a CA this server trusts' };
    default:
      return { text: `it could not be verified (${code})` };
  }
}

/** The account name the field holds, or why there is none (absent, several, or not a name at all). */
function accountNamed(certificate: PeerCertificate, field: CertificateAccountField): string | { problem: string } {
  let values: string[];
  switch (field) {
    case 'subject_cn':
      values = list(certificate.subject?.CN);
      break;
    case 'subject_email':
      values = list((certificate.subject as unknown as Record<string, string | string[] | undefined> | undefined)?.emailAddress);
      break;
    case 'san_email':
      values = altNames(certificate.subjectaltname, 'email').slice(0, 1);
      break;
    case 'san_dns':
      values = altNames(certificate.subjectaltname, 'DNS').slice(0, 1);
      break;
  }
  if (values.length === 0) return { problem: `it has no ${FIELD_NAMES[field]}` };
  if (values.length > 1) return { problem: `it has more than one ${FIELD_NAMES[field]}` };
  return values[0];
}

const FIELD_NAMES: Record<CertificateAccountField, string> = {
  subject_cn: 'subject common name (CN)',
  subject_email: 'subject emailAddress',
  san_email: 'email subject alternative name',
  san_dns: 'DNS subject alternative name',
};

/** Node gives a repeated subject attribute as an array. */
function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Names of one type from Node's `subjectaltname` text (`DNS:a, email:b@c`); a value Node had to
 * quote (it holds a comma or a quote) is JSON.
 */
function altNames(text: string | undefined, type: string): string[] {
  if (!text) return [];
  const names: string[] = [];
  const pattern = /(?:^|, )([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    if (match[1] !== type) continue;
    let value = match[2];
    if (value.startsWith('"')) {
      try { value = JSON.parse(value) as string; } catch { continue; }
    }
    names.push(value);
  }
  return names;
}
