/**
 * Client certificates (issue 22 part 2; docs/mqtt.md and docs/settings.md "Client certificates"):
 * a PKI made here with openssl (a trusted CA with a CRL, a second CA nobody trusts), and a valid,
 * an expired, another CA's, a revoked and an unknown account's certificate, each through MQTT over
 * TLS and secure WebSocket (the `mqtt` package, levels 4 and 5), `mosquitto_pub --cert`, HTTPS
 * REST and actions (`curl --cert` and Node's https), with `tls_client_certificates` optional and
 * required.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import type { IClientOptions } from 'mqtt';
import pino from 'pino';
import { call, readResponse, startServer, type HttpResult, type TestServer } from '../helpers/server';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { TestPki, type ClientPair } from '../helpers/test-pki';
import { MQTT_PORTS, brokerUrl, connectOk, tryConnect } from '../mqtt/mqtt-helpers';
import type { Settings } from '../../kernel/settings';

const PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];
const REST = '/engine/api/v1';

/** What is missing to run these tests ('' when nothing): never skipped, a missing tool fails the suite. */
const MISSING = [
  spawnSync('openssl', ['version']).error === undefined ? '' : 'openssl',
  spawnSync('mosquitto_pub', ['--help']).error === undefined ? '' : 'mosquitto_pub',
  spawnSync('curl', ['--version']).error === undefined ? '' : 'curl',
].filter(Boolean).join(', ');

/** A role that proves the certificate's account logs in with its own roles: devices/# only, tables read-only. */
const DEVICE_ROLE = {
  name: 'device',
  grants: [
    { commands: ['mq.connect'], resources: ['client:*'] },
    { commands: ['mq.publish', 'mq.subscribe', 'mq.retrieve'], resources: ['topic:devices/#'] },
    { commands: ['table.list', 'table.describe'], resources: ['*'] },
  ],
};

interface Certificates {
  valid: ClientPair;
  expired: ClientPair;
  otherCa: ClientPair;
  revoked: ClientPair;
  unknown: ClientPair;
}

function makeCertificates(pki: TestPki): Certificates {
  const revoked = pki.issue({ cn: 'alice' });
  pki.revoke(revoked);
  return {
    valid: pki.issue({ cn: 'alice' }),
    expired: pki.issue({ cn: 'alice', startDate: '20200101000000Z', endDate: '20210101000000Z' }),
    otherCa: pki.issue({ cn: 'alice', otherCa: true }),
    revoked,
    unknown: pki.issue({ cn: 'mallory' }),
  };
}

async function startWithCertificates(pki: TestPki, overrides: Partial<Settings>, log?: CapturedLog): Promise<TestServer> {
  const server = await startServer({
    plugins: PLUGINS, ...MQTT_PORTS, roles: [DEVICE_ROLE],
    tls_client_ca_file: pki.caFile, tls_client_crl_file: pki.crlFile, ...overrides,
  }, { logger: log?.logger });
  await server.engine.accounts.create('alice', 'alice-password-1', ['device']);
  return server;
}

function tlsOptions(pair: ClientPair | undefined): IClientOptions {
  return pair ? { key: readFileSync(pair.key), cert: readFileSync(pair.cert) } : {};
}

/** One HTTPS request with a client certificate (or none) and no Authorization unless given. */
function httpsCall(method: string, url: string, pair: ClientPair | undefined, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: Record<string, string> = { ...options.headers };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {
      method, headers, agent: false, rejectUnauthorized: false,
      ...(pair ? { key: readFileSync(pair.key), cert: readFileSync(pair.cert) } : {}),
    }, (res) => readResponse(res, resolve));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** A logger whose entries a test can wait for (the CRL reload is seen by polling the file). */
function waitableLog(): CapturedLog & { waitFor(match: (entry: Record<string, any>) => boolean): Promise<Record<string, any>> } {
  const entries: Array<Record<string, any>> = [];
  const waiters: Array<{ match: (entry: Record<string, any>) => boolean; resolve: (entry: Record<string, any>) => void }> = [];
  const logger = pino({ level: 'info' }, {
    write: (line: string) => {
      const entry = JSON.parse(line) as Record<string, any>;
      entries.push(entry);
      for (const waiter of waiters.filter((w) => w.match(entry))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    },
  });
  return {
    logger,
    entries: () => entries,
    text: () => entries.map((entry) => JSON.stringify(entry)).join('\n'),
    waitFor: (match) => new Promise((resolve) => {
      const seen = entries.find(match);
      if (seen) resolve(seen);
      else waiters.push({ match, resolve });
    }),
  };
}

/** A TLS session ticket the server gives a client with this certificate. */
function sessionTicket(port: number, pair: ClientPair): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, key: readFileSync(pair.key), cert: readFileSync(pair.cert) });
    socket.once('session', (session: Buffer) => {
      socket.destroy();
      resolve(session);
    });
    socket.on('error', reject);
  });
}

/** Whether a connection offering `ticket` resumed that TLS session (and so skipped certificate checks). */
function resumes(port: number, pair: ClientPair, ticket: Buffer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, key: readFileSync(pair.key), cert: readFileSync(pair.cert), session: ticket }, () => {
      const reused = socket.isSessionReused();
      socket.destroy();
      resolve(reused);
    });
    socket.on('error', reject);
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => { stdout += data.toString(); });
    child.stderr.on('data', (data: Buffer) => { stderr += data.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** curl with a client certificate; the server's self-signed certificate (data_dir/tls) is the CA. */
async function curl(server: TestServer, pair: ClientPair, path: string, extra: string[] = []): Promise<{ status: number; body: any }> {
  const result = await run('curl', ['-sS', '--max-time', '20', '--cacert', join(server.dataDir, 'tls', 'server-cert.pem'),
    '--cert', pair.cert, '--key', pair.key, '-w', '\n%{http_code}', ...extra, `${server.https}${path}`]);
  assert.equal(result.code, 0, `curl failed: ${result.stderr}`);
  const lines = result.stdout.split('\n');
  const status = Number(lines.pop());
  const text = lines.join('\n');
  return { status, body: text ? JSON.parse(text) : undefined };
}

/** mosquitto_pub over the MQTT TLS listener with a client certificate and no user name. */
function mosquittoPub(server: TestServer, pair: ClientPair, version: '311' | '5', topic: string, message: string): Promise<Run> {
  return run('mosquitto_pub', ['-h', '127.0.0.1', '-p', String(server.engine.need('mqtt').ports.mqtts), '-V', version, '-q', '1',
    '--cafile', join(server.dataDir, 'tls', 'server-cert.pem'), '--insecure', '--cert', pair.cert, '--key', pair.key,
    '-i', `mosq-${version}-${Date.now()}`, '-t', topic, '-m', message]);
}

const REFUSED_CASES = [
  { name: 'expired', label: 'an expired', reason: 'it has expired', logged: 'CERT_HAS_EXPIRED' },
  { name: 'otherCa', label: "another CA's", reason: 'it is not signed by a CA this server trusts', logged: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
  { name: 'revoked', label: 'a revoked', reason: 'it has been revoked', logged: 'CERT_REVOKED' },
  { name: 'unknown', label: "an unknown account's", reason: 'it does not name an account that may log in', logged: 'unknown-account' },
] as const;

describe('client certificates (tls_client_certificates)', function () {
  this.timeout(60_000);
  let pki: TestPki;
  let certs: Certificates;

  before(() => {
    assert.equal(MISSING, '', `${MISSING} not found: apt-get install openssl mosquitto-clients curl`);
    pki = new TestPki();
    certs = makeCertificates(pki);
  });
  after(() => pki?.remove());

  describe('optional', () => {
    let server: TestServer;
    let log: CapturedLog;
    before(async () => {
      log = captureLog('info');
      server = await startWithCertificates(pki, { tls_client_certificates: 'optional' }, log);
    });
    after(() => server?.close());

    for (const scheme of ['mqtts', 'wss'] as const) {
      for (const protocolVersion of [4, 5] as const) {
        it(`${scheme} level ${protocolVersion}: a valid certificate logs in as its account without user name or password, with that account's roles`, async () => {
          const { client, connack } = await connectOk(brokerUrl(server, scheme), { protocolVersion, clientId: `alice-${scheme}-${protocolVersion}`, ...tlsOptions(certs.valid) });
          assert.equal(connack.returnCode ?? connack.reasonCode ?? 0, 0);
          const connection = server.engine.clientConnections.holder(`alice-${scheme}-${protocolVersion}`) as { principal?: { account: string; roles: readonly string[] } } | undefined;
          assert.deepEqual({ ...connection?.principal }, { account: 'alice', roles: ['device'] });
          await client.publishAsync('devices/alice/temperature', '21.5', { qos: 1 });
          if (protocolVersion === 5) {
            // The role allows devices/# only: another topic is refused for this account (PUBACK 0x87).
            const refused = await client.publishAsync('factory/secret', 'x', { qos: 1 }).then(() => undefined, (error: { code?: number }) => error);
            assert.equal(refused?.code, 0x87);
          }
          await client.endAsync();
        });

        for (const { name, label, reason } of REFUSED_CASES) {
          it(`${scheme} level ${protocolVersion}: ${label} certificate is refused with CONNACK ${protocolVersion === 5 ? '0x87' : '0x05'}`, async () => {
            const result = await tryConnect(brokerUrl(server, scheme), { protocolVersion, clientId: `${name}-${scheme}-${protocolVersion}`, ...tlsOptions(certs[name]) });
            assert.ok('refused' in result, 'CONNECT was accepted');
            assert.equal(result.code, protocolVersion === 5 ? 0x87 : 0x05);
            if (protocolVersion === 5) assert.equal(result.connack.properties?.reasonString, `the client certificate is not accepted: ${reason}`);
          });
        }
      }
    }

    it('MQTT over WebSocket at /mqtt on the HTTPS port: a valid certificate logs in, an expired one gets 0x87', async () => {
      const url = `wss://127.0.0.1:${new URL(server.https!).port}/mqtt`;
      const { client } = await connectOk(url, { protocolVersion: 5, clientId: 'alice-https-mqtt', ...tlsOptions(certs.valid) });
      assert.equal((server.engine.clientConnections.holder('alice-https-mqtt') as { principal?: { account: string } } | undefined)?.principal?.account, 'alice');
      await client.endAsync();
      const refused = await tryConnect(url, { protocolVersion: 5, ...tlsOptions(certs.expired) });
      assert.ok('refused' in refused && refused.code === 0x87);
    });

    it('mqtts: a certificate refused even with the right password (a bad certificate is never ignored)', async () => {
      const result = await tryConnect(brokerUrl(server, 'mqtts'), { protocolVersion: 5, username: 'alice', password: 'alice-password-1', ...tlsOptions(certs.expired) });
      assert.ok('refused' in result && result.code === 0x87);
    });

    it('mqtts: with a valid certificate, a user name naming the same account is accepted without checking the password; another account is refused (0x87)', async () => {
      const same = await connectOk(brokerUrl(server, 'mqtts'), { protocolVersion: 5, username: 'ALICE', password: 'not-checked', ...tlsOptions(certs.valid) });
      await same.client.endAsync();
      const other = await tryConnect(brokerUrl(server, 'mqtts'), { protocolVersion: 5, username: 'admin', password: 'ADMIN', ...tlsOptions(certs.valid) });
      assert.ok('refused' in other);
      assert.equal(other.code, 0x87);
      assert.equal(other.connack.properties?.reasonString, 'the client certificate is not accepted: the user name names another account than the certificate');
    });

    it('mqtts: without a certificate a client still logs in with its password (optional)', async () => {
      const { client } = await connectOk(brokerUrl(server, 'mqtts'), { protocolVersion: 5, username: 'alice', password: 'alice-password-1' });
      await client.endAsync();
    });

    for (const version of ['311', '5'] as const) {
      it(`mosquitto_pub -V ${version} --cert/--key: a valid certificate publishes; the refused ones are told "not authorised"`, async () => {
        const subscriber = await connectOk(brokerUrl(server, 'mqtt'), { protocolVersion: 5, username: 'admin', password: 'ADMIN' });
        const topic = `devices/mosquitto/${version}`;
        await subscriber.client.subscribeAsync(topic, { qos: 1 });
        const received = new Promise<string>((resolve) => subscriber.client.once('message', (_topic, payload) => resolve(payload.toString())));
        const ok = await mosquittoPub(server, certs.valid, version, topic, `hello ${version}`);
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(await received, `hello ${version}`);
        await subscriber.client.endAsync();
        for (const { name } of REFUSED_CASES) {
          const refused = await mosquittoPub(server, certs[name], version, topic, 'never');
          assert.notEqual(refused.code, 0, `${name} was accepted`);
          assert.match(refused.stderr + refused.stdout, /not authori[sz]ed/i, `${name}: ${refused.stderr}`);
        }
      });
    }

    it('HTTPS REST (curl --cert): a valid certificate reads as its account without Basic credentials, and its roles apply (403 on a write)', async () => {
      const list = await curl(server, certs.valid, `${REST}/table/main`);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.deepEqual(list.body, { _tables: [] });
      const create = await curl(server, certs.valid, `${REST}/table/main/readings`, ['-X', 'POST', '-H', 'content-type: application/json', '-d', '{"fields":[{"name":"v","type":"integer"}]}']);
      assert.equal(create.status, 403);
      assert.equal(create.body.errorCode, 12030);
      assert.match(create.body.errorMessage, /account "alice"/);
    });

    for (const { name, label, reason } of REFUSED_CASES) {
      it(`HTTPS (curl --cert): ${label} certificate answers 401 on REST and actions, even with valid Basic credentials`, async () => {
        const rest = await curl(server, certs[name], `${REST}/table/main`, ['-u', 'admin:ADMIN']);
        assert.equal(rest.status, 401);
        assert.deepEqual(rest.body, { errorCode: 12035, errorMessage: `the client certificate is not accepted: ${reason}` });
        const action = await curl(server, certs[name], '/api', ['-H', 'content-type: application/json', '-d', '{"api":"admin","action":"createSession","params":{"username":"admin","password":"ADMIN"}}']);
        assert.equal(action.status, 401);
        assert.equal(action.body.errorCode, 12035);
      });
    }

    it('HTTPS actions: a valid certificate runs actions without an authToken (its roles apply), and createSession needs no password', async () => {
      const list = await httpsCall('POST', `${server.https}/api`, certs.valid, { body: { api: 'db', action: 'listTables' } });
      assert.equal(list.status, 200);
      assert.equal(list.json.errorCode, 0, list.text);
      // No session was made: the envelope carries no token.
      assert.equal(list.json.authToken, '');
      const create = await httpsCall('POST', `${server.https}/api`, certs.valid, { body: { api: 'db', action: 'createTable', params: { tableName: 'nope', fields: [{ name: 'v', type: 'integer' }] } } });
      assert.equal(create.json.errorCode, 12030);
      const session = await httpsCall('POST', `${server.https}/api`, certs.valid, { body: { api: 'admin', action: 'createSession' } });
      assert.equal(session.json.errorCode, 0, session.text);
      assert.equal(typeof session.json.authToken, 'string');
      const described = await httpsCall('POST', `${server.https}/api`, certs.valid, { body: { api: 'admin', action: 'describeSessions', authToken: session.json.authToken } });
      assert.equal(described.json.result.sessions[0].username ?? described.json.result.sessions[0].account, 'alice', described.text);
      // Without a certificate createSession still needs both.
      const missing = await httpsCall('POST', `${server.https}/api`, undefined, { body: { api: 'admin', action: 'createSession', params: { username: 'alice' } } });
      assert.equal(missing.json.errorCode, 12025);
    });

    it('HTTPS: with a valid certificate, credentials of another account are refused (REST 401, createSession 12035); the same account is accepted', async () => {
      const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
      const other = await httpsCall('GET', `${server.https}${REST}/table/main`, certs.valid, { headers: basic('admin', 'ADMIN') });
      assert.equal(other.status, 401);
      assert.equal(other.json.errorCode, 12035);
      const same = await httpsCall('GET', `${server.https}${REST}/table/main`, certs.valid, { headers: basic('alice', 'not-checked') });
      assert.equal(same.status, 200);
      const session = await httpsCall('POST', `${server.https}/api`, certs.valid, { body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      assert.equal(session.json.errorCode, 12035);
    });

    it('plain HTTP and HTTPS without a certificate keep using passwords (optional)', async () => {
      assert.equal((await call('GET', `${server.http}${REST}/table/main`, { auth: ['alice', 'alice-password-1'] })).status, 200);
      assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, undefined)).status, 401);
      assert.equal((await call('GET', `${server.https}${REST}/table/main`, { auth: ['alice', 'alice-password-1'] })).status, 200);
    });

    it('an account deleted while its certificate is still valid is refused at once', async () => {
      await server.engine.accounts.create('bob', 'bob-password-1', ['device']);
      const bob = pki.issue({ cn: 'bob' });
      assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, bob)).status, 200);
      await server.engine.accounts.delete('bob');
      const after = await httpsCall('GET', `${server.https}${REST}/table/main`, bob);
      assert.equal(after.status, 401);
      assert.equal(after.json.errorMessage, 'the client certificate is not accepted: it does not name an account that may log in');
    });

    it('logs why each certificate was refused, with its fingerprint, and nothing secret', () => {
      const refusals = log.entries().filter((entry) => /client certificate refused/.test(entry.msg));
      for (const { logged } of REFUSED_CASES) {
        assert.ok(refusals.some((entry) => entry.reason === logged && typeof entry.fingerprint === 'string'), `no log entry with reason ${logged}: ${JSON.stringify(refusals)}`);
      }
      const text = log.text();
      assert.doesNotMatch(text, /PRIVATE KEY|BEGIN CERTIFICATE|alice-password-1|not-checked/);
      // The subject of an unverified certificate (whatever its maker wrote) is not logged.
      for (const entry of refusals.filter((e) => e.reason !== 'unknown-account')) assert.equal(entry.account, undefined);
    });
  });

  describe('required', () => {
    let server: TestServer;
    let log: CapturedLog;
    before(async () => {
      log = captureLog('info');
      server = await startWithCertificates(pki, { tls_client_certificates: 'required' }, log);
    });
    after(() => server?.close());

    for (const scheme of ['mqtts', 'wss'] as const) {
      it(`${scheme}: a client without a certificate is refused with CONNACK 0x87 / 0x05 even with a right password; a valid certificate connects`, async () => {
        for (const protocolVersion of [4, 5] as const) {
          const result = await tryConnect(brokerUrl(server, scheme), { protocolVersion, username: 'alice', password: 'alice-password-1' });
          assert.ok('refused' in result, 'CONNECT was accepted');
          assert.equal(result.code, protocolVersion === 5 ? 0x87 : 0x05);
          if (protocolVersion === 5) assert.equal(result.connack.properties?.reasonString, 'the client certificate is not accepted: this listener requires a client certificate');
        }
        const { client } = await connectOk(brokerUrl(server, scheme), { protocolVersion: 5, ...tlsOptions(certs.valid) });
        await client.endAsync();
      });
    }

    it('HTTPS: no certificate answers 401 on every path (REST, actions, GET /); a valid certificate is served', async () => {
      for (const [method, path] of [['GET', `${REST}/table/main`], ['POST', '/api'], ['GET', '/']] as const) {
        const refused = await httpsCall(method, `${server.https}${path}`, undefined, method === 'POST' ? { body: { api: 'admin', action: 'pingSession' } } : {});
        assert.equal(refused.status, 401, path);
        assert.equal(refused.json.errorCode, 12035);
      }
      assert.equal((await curl(server, certs.valid, `${REST}/table/main`)).status, 200);
    });

    it('the plain listeners (MQTT over TCP, HTTP) are not TLS and keep password logins, and the start log warns so', async () => {
      const { client } = await connectOk(brokerUrl(server, 'mqtt'), { protocolVersion: 5, username: 'alice', password: 'alice-password-1' });
      await client.endAsync();
      assert.equal((await call('GET', `${server.http}${REST}/table/main`, { auth: ['alice', 'alice-password-1'] })).status, 200);
      const warnings = log.entries().filter((entry) => entry.level === 40 && /tls_client_certificates is required/.test(entry.msg));
      assert.equal(warnings.length, 2, JSON.stringify(warnings));
    });
  });

  describe('a CA or CRL file replaced while running', () => {
    it('a new revocation applies to new connections of HTTPS, mqtts and wss without a restart', async () => {
      const log = waitableLog();
      const server = await startWithCertificates(pki, { tls_client_certificates: 'optional' }, log);
      try {
        const soonRevoked = pki.issue({ cn: 'alice' });
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, soonRevoked)).status, 200);
        (await connectOk(brokerUrl(server, 'mqtts'), { protocolVersion: 5, ...tlsOptions(soonRevoked) })).client.end(true);
        const port = server.engine.need('mqtt').ports.mqtts!;
        const ticket = await sessionTicket(port, soonRevoked);
        assert.equal(await resumes(port, soonRevoked, ticket), true, 'a session ticket resumes before the reload');
        const reloaded = Promise.all([
          log.waitFor((entry) => entry.msg === 'reloaded the client CA and CRL files' && entry.listeners === 'https'),
          log.waitFor((entry) => entry.msg === 'reloaded the client CA and CRL files' && entry.listeners === 'mqtts, wss'),
        ]);
        pki.revoke(soonRevoked);
        await reloaded;
        // The ticket keys changed with the CRL: the revoked certificate cannot resume its old session.
        assert.equal(await resumes(port, soonRevoked, ticket), false);
        const refused = await httpsCall('GET', `${server.https}${REST}/table/main`, soonRevoked);
        assert.equal(refused.status, 401);
        assert.equal(refused.json.errorMessage, 'the client certificate is not accepted: it has been revoked');
        for (const scheme of ['mqtts', 'wss'] as const) {
          const result = await tryConnect(brokerUrl(server, scheme), { protocolVersion: 5, ...tlsOptions(soonRevoked) });
          assert.ok('refused' in result && result.code === 0x87, scheme);
        }
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, certs.valid)).status, 200);
      } finally {
        await server.close();
      }
    });

    it('a CRL file that no longer loads keeps the previous one and says so in the log', async () => {
      const log = waitableLog();
      const crlCopy = join(pki.dir, 'crl-copy.pem');
      writeFileSync(crlCopy, readFileSync(pki.crlFile));
      const server = await startWithCertificates(pki, { tls_client_certificates: 'optional', tls_client_crl_file: crlCopy, mqtts_port: null, mqtt_wss_port: null }, log);
      try {
        const failed = log.waitFor((entry) => entry.msg === 'the client CA and CRL files were not reloaded: the previous ones stay');
        writeFileSync(crlCopy, 'not a CRL');
        const entry = await failed;
        assert.match(entry.err.message, /holds no PEM certificate revocation list/);
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, certs.valid)).status, 200);
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, certs.revoked)).status, 401);
      } finally {
        await server.close();
      }
    });
  });

  describe('settings', () => {
    it('tls_certificate_account_field san_email: the email subject alternative name names the account', async () => {
      const server = await startServer({ plugins: ['http', 'rest', 'data', 'storage-lmdb'], tls_client_certificates: 'optional', tls_client_ca_file: pki.caFile, tls_certificate_account_field: 'san_email' });
      try {
        await server.engine.accounts.create('carol@example.com', 'carol-password-1', ['reader']);
        const carol = pki.issue({ cn: 'not-an-account', san: 'DNS:carol.example.com,email:carol@example.com' });
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, carol)).status, 200);
        const noEmail = await httpsCall('GET', `${server.https}${REST}/table/main`, certs.valid);
        assert.equal(noEmail.status, 401);
        assert.equal(noEmail.json.errorMessage, 'the client certificate is not accepted: it has no email subject alternative name');
      } finally {
        await server.close();
      }
    });

    it('tls_certificate_account_field subject_email: the subject emailAddress names the account', async () => {
      const server = await startServer({ plugins: ['http', 'rest', 'data', 'storage-lmdb'], tls_client_certificates: 'required', tls_client_ca_file: pki.caFile, tls_certificate_account_field: 'subject_email' });
      try {
        await server.engine.accounts.create('dave@example.com', 'dave-password-1', ['reader']);
        const dave = pki.issue({ cn: 'dave', email: 'dave@example.com' });
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, dave)).status, 200);
      } finally {
        await server.close();
      }
    });

    it('tls_certificate_account_field san_dns: the first DNS subject alternative name names the account', async () => {
      const server = await startServer({ plugins: ['http', 'rest', 'data', 'storage-lmdb'], tls_client_certificates: 'optional', tls_client_ca_file: pki.caFile, tls_certificate_account_field: 'san_dns' });
      try {
        await server.engine.accounts.create('gw1.example.com', 'gateway-password-1', ['reader']);
        const gateway = pki.issue({ cn: 'gateway', san: 'DNS:gw1.example.com,DNS:other.example.com' });
        assert.equal((await httpsCall('GET', `${server.https}${REST}/table/main`, gateway)).status, 200);
      } finally {
        await server.close();
      }
    });

    it('subject_cn: a certificate with two common names is refused as ambiguous', async () => {
      const server = await startServer({ plugins: ['http', 'rest', 'data', 'storage-lmdb'], tls_client_certificates: 'optional', tls_client_ca_file: pki.caFile });
      try {
        await server.engine.accounts.create('alice', 'alice-password-1', ['reader']);
        const twoNames = pki.issue({ cn: 'alice/CN=admin' });
        const refused = await httpsCall('GET', `${server.https}${REST}/table/main`, twoNames);
        assert.equal(refused.status, 401);
        assert.equal(refused.json.errorMessage, 'the client certificate is not accepted: it has more than one subject common name (CN)');
      } finally {
        await server.close();
      }
    });

    it('certificates on without tls_client_ca_file, or with a file that is not a CRL, stop the start naming the setting', async () => {
      await assert.rejects(startServer({ plugins: ['http'], tls_client_certificates: 'optional' }), /set tls_client_ca_file/);
      await assert.rejects(startServer({ plugins: ['http'], tls_client_certificates: 'optional', tls_client_ca_file: pki.caFile, tls_client_crl_file: pki.caFile }), /tls_client_crl_file .* holds no PEM certificate revocation list/);
      await assert.rejects(startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt'], ...MQTT_PORTS, tls_client_certificates: 'required', tls_client_ca_file: join(pki.dir, 'missing.pem') }), /cannot read tls_client_ca_file/);
    });
  });
});
