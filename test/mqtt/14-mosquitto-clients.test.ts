/**
 * Interoperability with Debian's Mosquitto command-line clients (`mosquitto-clients`):
 * mosquitto_pub → `mqtt` package subscriber and `mqtt` package publisher → mosquitto_sub, at
 * -V 311 and -V 5, QoS 0/1/2, retained (-r), credentials (-u/-P), over TCP and TLS (--cafile with
 * the server's self-signed certificate). Every child is bounded (-C count, -W timeout).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server';
import { closeClient, openClient, publishOk, startMessagingBroker, subscribeOk, uniqueName } from './session-helpers';

/** What is missing to run these tests ('' when nothing): `npm test` installs mosquitto-clients (scripts/ensure.mjs). */
const MISSING = [
  spawnSync('mosquitto_pub', ['--help']).error === undefined ? '' : 'mosquitto_pub',
  spawnSync('mosquitto_sub', ['--help']).error === undefined ? '' : 'mosquitto_sub',
  spawnSync('stdbuf', ['--version']).error === undefined ? '' : 'stdbuf',
].filter(Boolean).join(', ');
const FORMAT = 'MSG|%t|%q|%r|%p'; // topic, QoS, retain flag, payload

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

interface Subscriber {
  /** Resolves when mosquitto_sub has its SUBACK (debug output). */
  subscribed: Promise<void>;
  /** Resolves when it exits (after -C messages or the -W timeout). */
  done: Promise<Run>;
}

/** mosquitto_sub -d: its debug lines say when the SUBACK came, message lines use FORMAT. */
function mosquittoSub(args: string[]): Subscriber {
  // stdout to a pipe is block-buffered: stdbuf -oL makes the SUBACK line come out when it happens
  const child = spawn('stdbuf', ['-oL', 'mosquitto_sub', '-d', '-F', FORMAT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let subscribed!: () => void;
  const ready = new Promise<void>((resolve) => { subscribed = resolve; });
  child.stdout.on('data', (data: Buffer) => {
    stdout += data.toString();
    if (/received SUBACK/.test(stdout)) subscribed();
  });
  child.stderr.on('data', (data: Buffer) => { stderr += data.toString(); });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    subscribed: Promise.race([ready, done.then((result) => { throw new Error(`mosquitto_sub exited before SUBACK: ${result.stdout}${result.stderr}`); })]),
    done,
  };
}

/** The FORMAT lines of a mosquitto_sub run: [topic, qos, retain, payload]. */
function messageLines(result: Run): string[][] {
  return result.stdout.split('\n').filter((line) => line.startsWith('MSG|')).map((line) => line.split('|').slice(1));
}

describe('mqtt 14: mosquitto_pub / mosquitto_sub', function () {
  this.timeout(30_000);
  let server: TestServer;
  let tcp: string[];
  let tls: string[];
  before(async () => {
    // Never skipped: missing clients fail the suite (npm test installs them; so does npm run setup).
    assert.equal(MISSING, '', `${MISSING} not found: apt-get install mosquitto-clients coreutils (npm test installs them when it can)`);
    server = await startMessagingBroker();
    await server.engine.accounts.create('mosq', 'mosq-pw', ['admin']);
    const { ports } = server.engine.need('mqtt');
    tcp = ['-h', '127.0.0.1', '-p', String(ports.mqtt), '-u', 'mosq', '-P', 'mosq-pw'];
    // the self-signed pair the broker generated in data_dir/tls (no http plugin loaded)
    tls = ['-h', '127.0.0.1', '-p', String(ports.mqtts), '-u', 'mosq', '-P', 'mosq-pw', '--cafile', join(server.dataDir, 'tls', 'server-cert.pem'), '--insecure'];
  });
  after(() => server?.close());

  for (const version of ['311', '5'] as const) {
    for (const qos of [0, 1, 2] as const) {
      it(`mosquitto_pub -V ${version} -q ${qos} → mqtt package subscriber`, async () => {
        const topic = uniqueName(`mosq/pub${version}q${qos}`);
        const subscriber = await openClient(server, { clientId: uniqueName('sub'), protocolVersion: version === '5' ? 5 : 4 });
        await subscribeOk(subscriber.client, topic, { qos: 2 });
        const result = await run('mosquitto_pub', [...tcp, '-V', version, '-q', String(qos), '-i', uniqueName('mpub'), '-t', topic, '-m', `hello ${version}/${qos}`]);
        assert.equal(result.code, 0, result.stderr);
        const message = await subscriber.inbox.waitForPayload(`hello ${version}/${qos}`);
        assert.equal(message.topic, topic);
        assert.equal(message.packet.qos, qos);
        await closeClient(subscriber);
      });

      it(`mqtt package publisher (QoS ${qos}) → mosquitto_sub -V ${version} -q ${qos}`, async () => {
        const topic = uniqueName(`mosq/sub${version}q${qos}`);
        const sub = mosquittoSub([...tcp, '-V', version, '-q', String(qos), '-i', uniqueName('msub'), '-t', topic, '-C', '2', '-W', '20']);
        await sub.subscribed;
        const publisher = await openClient(server, { clientId: uniqueName('pub'), protocolVersion: version === '5' ? 5 : 4 });
        await publishOk(publisher.client, topic, 'first', { qos });
        await publishOk(publisher.client, topic, 'second', { qos: 2 });
        const result = await sub.done;
        assert.equal(result.code, 0, result.stdout + result.stderr);
        // the second message is downgraded to the subscription's QoS [MQTT-3.8.4-6 / 3.1.1 MQTT-3.8.4-6]
        assert.deepEqual(messageLines(result), [[topic, String(qos), '0', 'first'], [topic, String(qos), '0', 'second']]);
        await closeClient(publisher);
      });
    }

    it(`-V ${version}: a retained message from mosquitto_pub -r reaches a later mosquitto_sub with the retain flag; an empty -r clears it`, async () => {
      const topic = uniqueName(`mosq/retained${version}`);
      const published = await run('mosquitto_pub', [...tcp, '-V', version, '-q', '1', '-r', '-t', topic, '-m', 'kept']);
      assert.equal(published.code, 0, published.stderr);
      const first = mosquittoSub([...tcp, '-V', version, '-q', '1', '-t', topic, '-C', '1', '-W', '20']);
      const result = await first.done;
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.deepEqual(messageLines(result), [[topic, '1', '1', 'kept']]);

      const cleared = await run('mosquitto_pub', [...tcp, '-V', version, '-q', '1', '-r', '-t', topic, '-n']);
      assert.equal(cleared.code, 0, cleared.stderr);
      // after clearing, a new subscriber sees only what is published next
      const second = mosquittoSub([...tcp, '-V', version, '-q', '1', '-t', topic, '-C', '1', '-W', '20']);
      await second.subscribed;
      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'marker', { qos: 1 });
      const after = await second.done;
      assert.deepEqual(messageLines(after), [[topic, '1', '0', 'marker']]);
      await closeClient(publisher);
    });

    it(`-V ${version}: wrong credentials are refused (mosquitto_pub exits non-zero, nothing published)`, async () => {
      const topic = uniqueName(`mosq/badauth${version}`);
      const subscriber = await openClient(server, { clientId: uniqueName('sub') });
      await subscribeOk(subscriber.client, topic, { qos: 1 });
      const bad = tcp.slice(0, 4).concat(['-u', 'mosq', '-P', 'wrong']);
      const result = await run('mosquitto_pub', [...bad, '-V', version, '-q', '1', '-t', topic, '-m', 'must-not-arrive']);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr + result.stdout, /not authori[sz]ed|bad user name or password|Connection Refused/i);
      const publisher = await openClient(server, { clientId: uniqueName('pub') });
      await publishOk(publisher.client, topic, 'marker', { qos: 1 });
      await subscriber.inbox.waitForPayload('marker');
      assert.deepEqual(subscriber.inbox.payloads(), ['marker']);
      await closeClient(publisher);
      await closeClient(subscriber);
    });

    it(`-V ${version} over TLS (--cafile the server's certificate): mosquitto_pub → mosquitto_sub`, async () => {
      const topic = uniqueName(`mosq/tls${version}`);
      const sub = mosquittoSub([...tls, '-V', version, '-q', '1', '-t', topic, '-C', '1', '-W', '20']);
      await sub.subscribed;
      const published = await run('mosquitto_pub', [...tls, '-V', version, '-q', '1', '-t', topic, '-m', 'over tls']);
      assert.equal(published.code, 0, published.stderr);
      const result = await sub.done;
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.deepEqual(messageLines(result), [[topic, '1', '0', 'over tls']]);
    });
  }
});
