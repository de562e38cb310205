/**
 * A small PKI made in the test itself with Debian's `openssl`: a client CA (with an `openssl ca`
 * database, so it can backdate certificates and revoke them into a CRL), a second CA nobody
 * trusts, and client certificates issued on demand. Files are PEM in one temporary folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ClientPair {
  cert: string;
  key: string;
}

export interface IssueOptions {
  /** Subject common name. */
  cn: string;
  /** Subject emailAddress. */
  email?: string;
  /** subjectAltName value, e.g. `email:alice@example.com`. */
  san?: string;
  /** Validity as `openssl ca` takes it (YYYYMMDDHHMMSSZ); default: from now for 30 days. */
  startDate?: string;
  endDate?: string;
  /** Sign with the untrusted second CA. */
  otherCa?: boolean;
}

export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'engine-pki.d-'));
  /** The CA clients chain to (tls_client_ca_file). */
  readonly caFile = join(this.dir, 'ca', 'ca.pem');
  /** A CA the server does not trust. */
  readonly otherCaFile = join(this.dir, 'other', 'ca.pem');
  /** The CA's current CRL (tls_client_crl_file), rewritten by `revoke`. */
  readonly crlFile = join(this.dir, 'ca', 'crl.pem');
  private serial = 0;

  constructor() {
    for (const name of ['ca', 'other']) {
      const dir = join(this.dir, name);
      mkdirSync(join(dir, 'issued'), { recursive: true });
      writeFileSync(join(dir, 'index.txt'), '');
      writeFileSync(join(dir, 'serial'), '1000\n');
      writeFileSync(join(dir, 'crlnumber'), '1000\n');
      writeFileSync(join(dir, 'ca.cnf'), caConfig(dir));
      openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-sha256', '-days', '3650',
        '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'), '-subj', `/CN=engine test ${name} CA`);
    }
    this.writeCrl();
  }

  /** A client key and certificate. */
  issue(options: IssueOptions): ClientPair {
    const ca = join(this.dir, options.otherCa ? 'other' : 'ca');
    const base = join(this.dir, `client-${++this.serial}`);
    const subject = `/CN=${options.cn}${options.email ? `/emailAddress=${options.email}` : ''}`;
    const request = ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', subject];
    if (options.san) request.push('-addext', `subjectAltName=${options.san}`);
    openssl(...request);
    const sign = ['ca', '-batch', '-notext', '-config', join(ca, 'ca.cnf'), '-in', `${base}.csr`, '-out', `${base}.pem`];
    if (options.startDate) sign.push('-startdate', options.startDate);
    if (options.endDate) sign.push('-enddate', options.endDate);
    else sign.push('-days', '30');
    openssl(...sign);
    return { cert: `${base}.pem`, key: `${base}.key` };
  }

  /** Revokes a certificate of the trusted CA and rewrites the CRL file. */
  revoke(pair: ClientPair): void {
    openssl('ca', '-batch', '-config', join(this.dir, 'ca', 'ca.cnf'), '-revoke', pair.cert);
    this.writeCrl();
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private writeCrl(): void {
    openssl('ca', '-batch', '-config', join(this.dir, 'ca', 'ca.cnf'), '-gencrl', '-out', this.crlFile);
  }
}

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function caConfig(dir: string): string {
  return `[ ca ]
default_ca = test_ca
[ test_ca ]
database = ${dir}/index.txt
new_certs_dir = ${dir}/issued
serial = ${dir}/serial
crlnumber = ${dir}/crlnumber
certificate = ${dir}/ca.pem
private_key = ${dir}/ca.key
default_md = sha256
default_crl_days = 30
policy = any_subject
unique_subject = no
copy_extensions = copy
x509_extensions = client_certificate
[ any_subject ]
commonName = supplied
emailAddress = optional
[ client_certificate ]
basicConstraints = CA:FALSE
keyUsage = digitalSignature
extendedKeyUsage = clientAuth
`;
}
