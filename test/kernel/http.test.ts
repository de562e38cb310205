import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { call, startServer, tempDataDir } from '../helpers/server';

function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw).fingerprint256);
    });
    socket.on('error', reject);
  });
}

describe('plugins/http', () => {
  it('answers GET / on HTTP and HTTPS with name, version and plugins', async () => {
    const server = await startServer({ plugins: ['http'] });
    try {
      for (const base of [server.http, server.https!]) {
        const reply = await call('GET', `${base}/`, { auth: null });
        assert.equal(reply.status, 200);
        assert.equal(reply.json.name, 'engine');
        assert.match(reply.json.version, /^\d+\.\d+\.\d+/);
        assert.deepEqual(reply.json.plugins, ['http']);
      }
    } finally {
      await server.close();
    }
  });

  it('keeps the generated certificate across restarts', async () => {
    const dataDir = tempDataDir();
    const first = await startServer({ plugins: ['http'], data_dir: dataDir });
    const before = await servedFingerprint(first.https!);
    assert.equal(before, first.engine.need('http').certificateFingerprint);
    await first.close({ keepData: true });
    const second = await startServer({ plugins: ['http'], data_dir: dataDir });
    try {
      assert.equal(await servedFingerprint(second.https!), before);
      const pem = readFileSync(join(dataDir, 'tls', 'server-cert.pem'), 'utf8');
      assert.equal(new X509Certificate(pem).fingerprint256, before);
    } finally {
      await second.close();
    }
  });

  it('serves tls_cert_file / tls_key_file when set', async () => {
    const donor = await startServer({ plugins: ['http'] });
    const certFile = join(donor.dataDir, 'tls', 'server-cert.pem');
    const keyFile = join(donor.dataDir, 'tls', 'server-key.pem');
    const server = await startServer({ plugins: ['http'], tls_cert_file: certFile, tls_key_file: keyFile });
    try {
      assert.equal(await servedFingerprint(server.https!), donor.engine.need('http').certificateFingerprint);
    } finally {
      await server.close();
      await donor.close();
    }
  });

  it('leaves a listener closed when its port is off', async () => {
    const server = await startServer({ plugins: ['http'], listening_https_port: null });
    try {
      assert.equal(server.https, undefined);
      assert.equal((await call('GET', `${server.http}/`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('answers an oversize body with 413 and keeps serving', async () => {
    const server = await startServer({ plugins: ['http'], body_limit_bytes: 2048 });
    try {
      server.engine.need('http').fastify; // routes are registered before start; use the not-found route body
      const reply = await call('POST', `${server.http}/anything`, { body: { blob: 'x'.repeat(4096) } });
      assert.equal(reply.status, 413);
      assert.equal(reply.json.errorCode, 12028);
      assert.equal((await call('GET', `${server.http}/`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('answers an unknown route with 404 and an error body', async () => {
    const server = await startServer({ plugins: ['http'] });
    try {
      const reply = await call('GET', `${server.http}/nowhere`);
      assert.equal(reply.status, 404);
      assert.equal(reply.json.errorCode, 12004);
      assert.match(reply.json.errorMessage, /\/nowhere/);
    } finally {
      await server.close();
    }
  });

  it('listens on loopback only while admin has the default password', async () => {
    const server = await startServer({ plugins: ['http'] });
    try {
      assert.match(server.http, /^http:\/\/127\.0\.0\.1:\d+$/);
      const address = (server.engine.need('http').fastify.server.address() as { address: string }).address;
      assert.equal(address, '127.0.0.1');
    } finally {
      await server.close();
    }
  });
});
