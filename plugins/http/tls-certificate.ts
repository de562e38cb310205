/**
 * The TLS key pair for HTTPS (and later MQTTS/WSS): the files named by `tls_cert_file` /
 * `tls_key_file`, else a self-signed pair generated on first start and kept in `data_dir/tls`.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** SHA-256 fingerprint, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  generated: boolean;
}

export async function loadTlsMaterial(options: { dataDir: string; certFile: string | null; keyFile: string | null }): Promise<TlsMaterial> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) throw new Error('set both tls_cert_file and tls_key_file, or neither');
    const [cert, key] = await Promise.all([readFile(options.certFile, 'utf8'), readFile(options.keyFile, 'utf8')]);
    return { cert, key, fingerprint: fingerprintOf(cert), generated: false };
  }
  const dir = join(options.dataDir, 'tls');
  const certPath = join(dir, 'server-cert.pem');
  const keyPath = join(dir, 'server-key.pem');
  try {
    const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
    return { cert, key, fingerprint: fingerprintOf(cert), generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const now = new Date();
  const pair = await generate([{ name: 'commonName', value: 'localhost' }, { name: 'organizationName', value: 'engine self-signed' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(keyPath, pair.private, { mode: 0o600 });
  await writeFile(certPath, pair.cert, { mode: 0o644 });
  return { cert: pair.cert, key: pair.private, fingerprint: fingerprintOf(pair.cert), generated: true };
}

function fingerprintOf(cert: string): string {
  return new X509Certificate(cert).fingerprint256;
}
