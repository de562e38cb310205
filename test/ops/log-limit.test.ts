/**
 * The log cannot grow without bound (issue 20 part 3; docs/operations.md "A full disk and the
 * log's size"). With `log_max_bytes` small, a retention run (the 10 s timer's; called here) trims
 * the log's oldest messages, whatever their topic, down under the limit; messages an offline
 * persistent MQTT session still owes are kept and counted, the limit is reported (getLogStatus,
 * one warning), and the session gets every one on reconnect. `log_default_retention_seconds`
 * trims topics without a policy of their own by age.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server';
import { ManualClock } from '../helpers/manual-clock';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { MQTT_PORTS } from '../mqtt/mqtt-helpers';
import { closeClients, connectClient, connectWithInbox, publish, subscribe, unique } from '../mqtt/pubsub-helpers';
import { login, ok } from '../actions/action-client';
import { MQ_PLUGINS, mq, storedCount } from '../actions/mq/mq-client';

const MAX_BYTES = 256 * 1024;
const PAYLOAD = Buffer.alloc(1024, 0x62);

describe('ops: the message log\'s size limit and default retention', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let log: CapturedLog;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  before(async function () {
    log = captureLog('info');
    server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS, log_level: 'info', log_max_bytes: MAX_BYTES }, { clock, logger: log.logger });
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  /** One run of the retention timer, as it runs every 10 s. */
  const tick = (): Promise<unknown> => server.engine.need('topicRetention').run(clock.now());
  const logStatus = async (): Promise<any> => ok(server, mq('getLogStatus', token, {}));
  const warnings = (): number => log.entries().filter((entry) => String(entry.msg).startsWith('message log: over log_max_bytes')).length;

  it('trims the oldest messages no session owes under log_max_bytes, keeps and counts the owed ones, reports it once, and the session gets them all', async () => {
    const owedTopic = unique('limit/owed');
    const freeTopic = unique('limit/free');
    const clientId = unique('limit-session');
    const session = { clientId, clean: false, properties: { sessionExpiryInterval: 3600 } };
    const first = await connectWithInbox(server, session);
    await subscribe(first.client, owedTopic, { qos: 1 });
    await closeClients(first.client);
    const publisher = await connectClient(server);
    let second: Awaited<ReturnType<typeof connectWithInbox>> | undefined;
    try {
      // The oldest messages are owed to the offline session; then more than the limit of others.
      for (let i = 0; i < 50; i++) await publish(publisher, owedTopic, Buffer.concat([Buffer.from(`${i}:`), PAYLOAD]), { qos: 1 });
      for (let i = 0; i < 400; i++) await publish(publisher, freeTopic, PAYLOAD, { qos: 1 });
      const before = await logStatus();
      assert.ok(before.bytes > MAX_BYTES, `the log (${before.bytes} bytes) is over the limit`);
      assert.equal(before.maxBytes, MAX_BYTES);

      await tick();
      const after = await logStatus();
      assert.ok(after.bytes <= MAX_BYTES, `trimmed under the limit: ${after.bytes} bytes`);
      assert.equal(after.overLimit, true, 'the run found the log over the limit');
      assert.ok(after.trimmedMessages > 0 && storedCount(server, freeTopic) < 400, 'the oldest free messages went');
      assert.equal(storedCount(server, owedTopic), 50, 'every owed message is kept');
      assert.equal(after.keptOwedMessages, 50, 'and counted');
      assert.deepEqual(after.heldBackBy, [clientId]);
      assert.equal(warnings(), 1, 'the limit is reported');
      await tick();
      assert.equal(warnings(), 1, 'once, not once per run');

      second = await connectWithInbox(server, session);
      assert.equal(second.connack.sessionPresent, true);
      for (let i = 0; i < 50; i++) {
        const received: { payload: Buffer } = await second.inbox.next(owedTopic);
        assert.equal(received.payload.subarray(0, received.payload.indexOf(0x3a)).toString(), String(i));
      }
      // A round trip after the PUBACKs: the broker has handled them.
      await subscribe(second.client, `${owedTopic}/other`);
    } finally {
      await closeClients(second?.client, publisher);
      const { client } = await connectWithInbox(server, { clientId, clean: true }); // ends the session
      await closeClients(client);
    }
  });

  it('trims topics without a policy by log_default_retention_seconds', async () => {
    const aged = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS, log_default_retention_seconds: 60 }, { clock });
    try {
      const topic = unique('limit/aged');
      const publisher = await connectClient(aged);
      try {
        for (let i = 0; i < 3; i++) await publish(publisher, topic, `old ${i}`, { qos: 1 });
        clock.advanceSeconds(61);
        await publish(publisher, topic, 'new', { qos: 1 });
      } finally {
        await closeClients(publisher);
      }
      await aged.engine.need('topicRetention').run(clock.now());
      assert.equal(aged.engine.need('storage').messageLog.countTopic(topic), 1, 'the three older than 60 s went');
    } finally {
      await aged.close();
    }
  });
});
