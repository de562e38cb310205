/**
 * The TLS server options that ask clients for a certificate (`tls_client_certificates`
 * `optional` or `required`) on HTTPS, MQTT over TLS and secure WebSocket: the CA bundle
 * (`tls_client_ca_file`) and the revocation lists (`tls_client_crl_file`) the chain is checked
 * against. The handshake never fails for a missing or bad certificate (`rejectUnauthorized:
 * false`): the kernel decides what the outcome means (kernel/auth/certificate-login.ts), so the
 * client hears a CONNACK refusal or a 401 instead of a TLS alert (docs/decisions.md).
 * A CA or CRL file replaced while running is read again (`watchClientVerification`), so a new
 * revocation list applies to new connections without a restart.
 */
import { X509Certificate } from 'node:crypto';
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type Server as TlsServer } from 'node:tls';

export interface ClientCertificateSettings {
  tls_client_certificates: 'off' | 'optional' | 'required';
  tls_client_ca_file: string | null;
  tls_client_crl_file: string | null;
}

/** Options for `tls.createServer` / `https.createServer`, spread next to `cert` and `key`. */
export interface ClientVerificationOptions {
  requestCert: true;
  rejectUnauthorized: false;
  ca: string;
  crl?: string;
}

/** undefined when certificates are off; otherwise the files, read and checked now (a bad file stops the start). */
export async function loadClientVerification(settings: ClientCertificateSettings): Promise<ClientVerificationOptions | undefined> {
  if (settings.tls_client_certificates === 'off') return undefined;
  const caFile = settings.tls_client_ca_file;
  if (!caFile) throw new Error(`tls_client_certificates is "${settings.tls_client_certificates}": set tls_client_ca_file to the CA bundle client certificates must chain to`);
  const ca = await readSettingFile('tls_client_ca_file', caFile);
  if (!/-----BEGIN CERTIFICATE-----/.test(ca)) throw new Error(`tls_client_ca_file ${caFile} holds no PEM certificate`);
  try {
    // The first certificate of the bundle parses, and Node accepts the whole bundle.
    new X509Certificate(ca);
    createSecureContext({ ca });
  } catch (error) {
    throw new Error(`tls_client_ca_file ${caFile} is not a PEM certificate bundle: ${(error as Error).message}`);
  }
  const options: ClientVerificationOptions = { requestCert: true, rejectUnauthorized: false, ca };
  const crlFile = settings.tls_client_crl_file;
  if (crlFile) {
    const crl = await readSettingFile('tls_client_crl_file', crlFile);
    if (!/-----BEGIN X509 CRL-----/.test(crl)) throw new Error(`tls_client_crl_file ${crlFile} holds no PEM certificate revocation list`);
    try {
      createSecureContext({ ca, crl });
    } catch (error) {
      throw new Error(`tls_client_crl_file ${crlFile} is not a PEM revocation list: ${(error as Error).message}`);
    }
    options.crl = crl;
  }
  return options;
}

async function readSettingFile(setting: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${setting} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** How often the CA and CRL files are checked for a change (a stat each; a replaced file is seen too). */
export const RELOAD_POLL_MS = 2000;

/**
 * Reads the CA and CRL files again whenever one changes and hands the new options to `apply`
 * (the listeners' `setSecureContext`); `report` hears each outcome: no error when applied, the
 * error when a file did not load (the previous options stay). Returns the function that stops it.
 */
export function watchClientVerification(
  settings: ClientCertificateSettings,
  apply: (options: ClientVerificationOptions) => void,
  report: (error?: Error) => void,
): () => void {
  if (settings.tls_client_certificates === 'off') return () => undefined;
  const files = [settings.tls_client_ca_file, settings.tls_client_crl_file].filter((file): file is string => !!file);
  let reloading = Promise.resolve();
  const changed = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    // One reload at a time, in the order of the changes.
    reloading = reloading.then(() => loadClientVerification(settings)).then((options) => {
      if (!options) return;
      apply(options);
      report();
    }, (error: Error) => report(error));
  };
  for (const file of files) watchFile(file, { persistent: false, interval: RELOAD_POLL_MS }, changed);
  return () => {
    for (const file of files) unwatchFile(file, changed);
  };
}

/**
 * Puts reloaded CA and CRL files to use on a TLS listener (HTTPS and secure WebSocket are TLS
 * servers too). The new context has new session ticket keys (none are configured), so a client
 * cannot resume a session made before the reload, which would skip the certificate checks:
 * a certificate the new CRL revokes is refused at once (the test checks it).
 */
export function applyClientVerification(server: TlsServer, pair: { cert: string; key: string }, options: ClientVerificationOptions): void {
  server.setSecureContext({ cert: pair.cert, key: pair.key, ...options });
}
