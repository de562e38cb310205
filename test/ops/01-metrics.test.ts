/**
 * GET /metrics through real HTTP, with real MQTT clients (the `mqtt` package and raw sockets) and
 * REST and action requests: every family is served, and each figure moves by exactly the traffic
 * sent between two scrapes. Authentication: Basic or Bearer with a `metrics.read` grant, or open
 * with metrics_require_auth false.
 */
import assert from 'node:assert/strict';
import mqttPacket from 'mqtt-packet';
import type { MqttClient } from 'mqtt';
import { call, startServer, type TestServer } from '../helpers/server';
import { brokerUrl, connectOk, connectPacket, RawClient, refusedCode } from '../mqtt/mqtt-helpers';
import { parseExposition, scrape, sumOf, valueOf, type Scrape } from './scrape';

const PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt', 'metrics'];
const ROLES = [{ name: 'monitoring', grants: [{ commands: ['metrics.read'], resources: ['system'] }] }];

/** Every family the issue asks for, with its Prometheus type. */
const FAMILIES: Record<string, string> = {
  engine_mqtt_connections: 'gauge',
  engine_http_connections: 'gauge',
  engine_messages_received_total: 'counter',
  engine_messages_sent_total: 'counter',
  engine_messages_stored_total: 'counter',
  engine_messages_dropped_total: 'counter',
  engine_mqtt_received_bytes_total: 'counter',
  engine_mqtt_sent_bytes_total: 'counter',
  engine_sessions: 'gauge',
  engine_subscriptions: 'gauge',
  engine_retained_messages: 'gauge',
  engine_topics: 'gauge',
  engine_message_log_bytes: 'gauge',
  engine_message_log_last_sequence: 'gauge',
  engine_message_log_append_seconds: 'histogram',
  engine_storage_commit_seconds: 'histogram',
  engine_http_requests_total: 'counter',
  engine_http_request_duration_seconds: 'histogram',
  engine_action_requests_total: 'counter',
  engine_action_request_duration_seconds: 'histogram',
  engine_login_failures_total: 'counter',
  engine_lmdb_map_size_bytes: 'gauge',
  engine_lmdb_map_used_bytes: 'gauge',
  engine_data_dir_free_bytes: 'gauge',
  engine_data_dir_filesystem_bytes: 'gauge',
  // collectDefaultMetrics
  nodejs_eventloop_lag_seconds: 'gauge',
  nodejs_heap_size_used_bytes: 'gauge',
  process_cpu_user_seconds_total: 'counter',
};

async function action(http: string, envelope: Record<string, unknown>): Promise<any> {
  const reply = await call('POST', `${http}/api`, { body: envelope, auth: null });
  assert.equal(reply.status, 200, reply.text);
  return reply.json;
}

/** Resolves once the client has received `count` messages. */
function receive(client: MqttClient, count: number): Promise<Array<{ topic: string; qos: number }>> {
  const got: Array<{ topic: string; qos: number }> = [];
  return new Promise((resolve) => client.on('message', (topic, _payload, packet) => {
    got.push({ topic, qos: packet.qos });
    if (got.length === count) resolve(got);
  }));
}

function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return sumOf(after, name, labels) - sumOf(before, name, labels);
}

describe('ops 01: GET /metrics', function () {
  this.timeout(60_000);
  let server: TestServer;
  const clients: MqttClient[] = [];

  before(async () => {
    server = await startServer({ plugins: PLUGINS, roles: ROLES, listening_https_port: null });
    await server.engine.accounts.create('scraper', 'scraper-password-1', ['monitoring']);
    await server.engine.accounts.create('looker', 'looker-password-1', ['reader']);
    const table = await call('POST', `${server.http}/engine/api/v1/table/main/readings`, { body: { fields: [{ name: 'n', type: 'integer' }] } });
    assert.equal(table.status, 200, table.text);
  });

  after(async () => {
    for (const client of clients) client.end(true);
    await server?.close();
  });

  it('serves every family with its type, as text/plain version 0.0.4', async () => {
    const reply = await call('GET', `${server.http}/metrics`, { auth: ['scraper', 'scraper-password-1'] });
    assert.equal(reply.status, 200, reply.text);
    assert.match(String(reply.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const { families } = parseExposition(reply.text);
    for (const [name, type] of Object.entries(FAMILIES)) assert.equal(families.get(name), type, `family ${name}`);
  });

  it('moves each figure by exactly the traffic sent: MQTT QoS 0 and 1, REST inserts, actions, failed logins', async () => {
    const url = brokerUrl(server);
    const subscriber = (await connectOk(url, { username: 'admin', password: 'ADMIN', clientId: 'metrics-sub', protocolVersion: 5 })).client;
    clients.push(subscriber);
    await subscriber.subscribeAsync('m/#', { qos: 1 });
    const publisher = (await connectOk(url, { username: 'admin', password: 'ADMIN', clientId: 'metrics-pub' })).client;
    clients.push(publisher);
    const before = await scrape(server.http);
    assert.equal(valueOf(before, 'engine_mqtt_connections{transport="tcp"}'), 2);
    assert.equal(valueOf(before, 'engine_sessions{state="connected"}'), 2);

    // MQTT: 3 at QoS 0 and 2 at QoS 1 (one retained) on two new topics, all delivered to the subscriber.
    const delivered = receive(subscriber, 5);
    for (let i = 0; i < 3; i++) await publisher.publishAsync('m/zero', `q0-${i}`, { qos: 0 });
    await publisher.publishAsync('m/one', 'q1', { qos: 1 });
    await publisher.publishAsync('m/kept', 'q1-retained', { qos: 1, retain: true });
    await delivered;
    // A WebSocket client besides.
    const ws = (await connectOk(brokerUrl(server, 'ws'), { username: 'admin', password: 'ADMIN', clientId: 'metrics-ws' })).client;
    clients.push(ws);
    // REST: two inserts.
    for (let n = 0; n < 2; n++) assert.equal((await call('POST', `${server.http}/engine/api/v1/record/main/readings`, { body: { n } })).status, 200);
    // Actions: one createSession that works, one that fails (a failed login too).
    assert.equal((await action(server.http, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } })).errorCode, 0);
    assert.equal((await action(server.http, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'wrong' } })).errorCode, 12033);
    // Failed logins on the two other protocols.
    assert.equal((await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: ['admin', 'wrong'] })).status, 401);
    assert.equal(await refusedCode(url, { username: 'admin', password: 'wrong', clientId: 'metrics-bad' }), 4, 'bad user name or password');

    const after = await scrape(server.http);
    for (const [qos, count] of [['0', 3], ['1', 2], ['2', 0]] as const) {
      assert.equal(delta(before, after, 'engine_messages_received_total', { qos }), count, `received at QoS ${qos}`);
      assert.equal(delta(before, after, 'engine_messages_stored_total', { qos }), count, `stored at QoS ${qos}`);
      assert.equal(delta(before, after, 'engine_messages_sent_total', { qos }), count, `sent at QoS ${qos}`);
    }
    assert.equal(delta(before, after, 'engine_topics'), 3);
    assert.equal(delta(before, after, 'engine_retained_messages'), 1);
    assert.equal(delta(before, after, 'engine_message_log_last_sequence'), 5);
    assert.equal(valueOf(after, 'engine_subscriptions'), 1);
    assert.equal(valueOf(after, 'engine_mqtt_connections{transport="tcp"}'), 2);
    assert.equal(valueOf(after, 'engine_mqtt_connections{transport="ws"}'), 1);
    assert.equal(valueOf(after, 'engine_sessions{state="connected"}'), 3);
    assert.ok(delta(before, after, 'engine_message_log_append_seconds_count') >= 1, 'the appends were timed');
    assert.ok(delta(before, after, 'engine_storage_commit_seconds_count') >= 1, 'the commits were timed');
    assert.ok(delta(before, after, 'engine_message_log_bytes') >= 0);

    const insertRoute = { method: 'POST', route: '/engine/api/v1/record/:db/:table' };
    assert.equal(delta(before, after, 'engine_http_requests_total', { ...insertRoute, status: '200' }), 2, after.text.split('\n').filter((line) => line.startsWith('engine_http_requests_total')).join('\n'));
    assert.equal(delta(before, after, 'engine_http_request_duration_seconds_count', insertRoute), 2);
    assert.equal(delta(before, after, 'engine_http_requests_total', { method: 'GET', route: '/engine/api/v1/table/:db', status: '401' }), 1);
    const createSession = { api: 'admin', action: 'createSession' };
    assert.equal(delta(before, after, 'engine_action_requests_total', { ...createSession, error_code: '0' }), 1);
    assert.equal(delta(before, after, 'engine_action_requests_total', { ...createSession, error_code: '12033' }), 1);
    assert.equal(delta(before, after, 'engine_action_request_duration_seconds_count', createSession), 2);
    assert.equal(delta(before, after, 'engine_login_failures_total', { reason: 'bad_credentials' }), 3);
    assert.ok(valueOf(after, 'engine_lmdb_map_used_bytes') > 0);
    assert.ok(valueOf(after, 'engine_lmdb_map_size_bytes') >= valueOf(after, 'engine_lmdb_map_used_bytes'));
    assert.ok(valueOf(after, 'engine_data_dir_free_bytes') > 0);
  });

  it('counts the bytes MQTT clients send and receive exactly (a raw 3.1.1 client: CONNECT, PUBLISH QoS 1, DISCONNECT)', async () => {
    const before = await scrape(server.http);
    const port = server.engine.need('mqtt').ports.mqtt!;
    const raw = await RawClient.open(port);
    const sent = [
      mqttPacket.generate(connectPacket({ clientId: 'metrics-raw' })),
      mqttPacket.generate({ cmd: 'publish', topic: 'bytes/one', payload: Buffer.from('twelve bytes'), qos: 1, messageId: 7, retain: false, dup: false }),
    ];
    for (const bytes of sent) raw.write(bytes);
    assert.equal((await raw.next('puback')).messageId, 7);
    raw.write(mqttPacket.generate({ cmd: 'disconnect' }));
    await raw.closed;
    const after = await scrape(server.http);
    const written = sent.reduce((sum, bytes) => sum + bytes.length, 0) + 2;
    assert.equal(delta(before, after, 'engine_mqtt_received_bytes_total'), written);
    assert.equal(delta(before, after, 'engine_mqtt_sent_bytes_total'), 4 + 4, 'CONNACK and PUBACK, 4 bytes each');
    assert.equal(delta(before, after, 'engine_messages_received_total', { qos: '1' }), 1);
  });

  it('answers 401 with the Basic challenge without credentials or with a wrong password', async () => {
    for (const auth of [null, ['scraper', 'not-it']] as const) {
      const reply = await call('GET', `${server.http}/metrics`, { auth: auth as [string, string] | null });
      assert.equal(reply.status, 401);
      assert.equal(reply.json.errorCode, 12033);
      assert.equal(reply.headers['www-authenticate'], 'Basic realm="engine"');
      assert.doesNotMatch(reply.text, /engine_/);
    }
  });

  it('answers 403 to an account without a metrics.read grant, and serves one that has it by Basic and by Bearer', async () => {
    const denied = await call('GET', `${server.http}/metrics`, { auth: ['looker', 'looker-password-1'] });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.errorCode, 12030);
    assert.match(denied.json.errorMessage, /metrics\.read/);
    assert.equal((await call('GET', `${server.http}/metrics`, { auth: ['scraper', 'scraper-password-1'] })).status, 200);
    const session = await action(server.http, { api: 'admin', action: 'createSession', params: { username: 'scraper', password: 'scraper-password-1' } });
    assert.equal(session.errorCode, 0, session.errorMessage);
    const bearer = await call('GET', `${server.http}/metrics`, { auth: null, headers: { authorization: `Bearer ${session.authToken}` } });
    assert.equal(bearer.status, 200);
    assert.match(bearer.text, /# TYPE engine_topics gauge/);
    const stale = await call('GET', `${server.http}/metrics`, { auth: null, headers: { authorization: 'Bearer not-a-live-token' } });
    assert.equal(stale.status, 401);
  });
});

describe('ops 01: GET /metrics with metrics_require_auth false', function () {
  let server: TestServer;
  before(async () => { server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'http', 'mqtt', 'metrics'], metrics_require_auth: false, listening_https_port: null }); });
  after(async () => { await server?.close(); });

  it('serves the metrics to a request without credentials', async () => {
    const reply = await call('GET', `${server.http}/metrics`, { auth: null });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(parseExposition(reply.text).families.get('engine_mqtt_connections'), 'gauge');
  });
});
