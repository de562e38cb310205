/**
 * Routing follows the log (docs/architecture.md, "Message core layout"): `MessageLogPort.follow`
 * hands each durable append's messages to its listeners, one array in sequence order, before the
 * append resolves; and the message core routes from it, so a message another component appends
 * to the log (here: straight through the port, as a replicated log or an integration-table
 * insert would) reaches MQTT subscribers and becomes the topic's retained message, as one
 * published over MQTT does.
 */
import assert from 'node:assert/strict';
import type { LoggedMessage, MessageLogPort } from '../../kernel/storage/message-log-port';
import type { MessageInput } from '../../kernel/storage/storage-port';
import type { TestServer } from '../helpers/server';
import { closeClients, connectClient, Inbox, startPubSubBroker, subscribe, unique } from '../mqtt/pubsub-helpers';

function input(text: string, retain = false): MessageInput {
  return {
    createTs: new Date().toISOString().replace('Z', ''),
    payload: { type: 'string', value: text },
    qos: 1,
    retain,
    contentType: null,
    correlationData: null,
    responseTopic: null,
    expirySeconds: null,
    userProperties: null,
    payloadFormat: 1,
    publisher: null,
  };
}

describe('routing follows the message log', function () {
  this.timeout(60_000);
  let server: TestServer;
  let log: MessageLogPort;

  before(async () => {
    server = await startPubSubBroker();
    log = server.engine.need('storage').messageLog;
  });
  after(() => server?.close());

  it('follow() gets each durable append as one array in sequence order, before the append resolves, until it stops', async () => {
    const root = unique('follow');
    const seen: LoggedMessage[][] = [];
    const stop = log.follow((messages) => { seen.push([...messages]); });
    const sequences = await log.append([{ topic: `${root}/a`, message: input('one') }, { topic: `${root}/b`, message: input('two') }]);
    assert.equal(seen.length, 1, 'one array for one append');
    assert.deepEqual(seen[0].map((m) => m.sequence), sequences);
    assert.deepEqual(seen[0].map((m) => m.topic), [`${root}/a`, `${root}/b`]);
    assert.deepEqual(seen[0].map((m) => m.payload), [{ type: 'string', value: 'one' }, { type: 'string', value: 'two' }]);
    stop();
    await log.append([{ topic: `${root}/a`, message: input('three') }]);
    assert.equal(seen.length, 1, 'nothing after stop()');
  });

  it('follow() gets only the stored messages of an appendEach (the refused ones are left out)', async () => {
    const root = unique('follow-each');
    const seen: LoggedMessage[][] = [];
    const stop = log.follow((messages) => { seen.push([...messages]); });
    try {
      const answers = await log.appendEach([
        { topic: `${root}/a`, message: input('kept') },
        { topic: `${root}/#`, message: input('refused: a wildcard') },
        { topic: `${root}/b`, message: input('kept too') },
      ]);
      assert.equal(typeof answers[1], 'object', 'the wildcard topic is refused');
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0].map((m) => m.sequence), [answers[0], answers[2]]);
    } finally {
      stop();
    }
  });

  it('a follower that throws does not fail the append nor silence the other followers; the fault is reported as a process warning', async () => {
    const root = unique('follow-fault');
    const warned = new Promise<Error>((resolve) => {
      const onWarning = (warning: Error): void => {
        if (warning.name !== 'LogFollowerFault') return;
        process.off('warning', onWarning);
        resolve(warning);
      };
      process.on('warning', onWarning);
    });
    const seen: number[] = [];
    const stopFaulty = log.follow(() => { throw new Error('a follower failed (test)'); });
    const stopOther = log.follow((messages) => { for (const m of messages) seen.push(m.sequence); });
    try {
      const sequences = await log.append([{ topic: `${root}/a`, message: input('still stored') }]);
      assert.deepEqual(seen, sequences, 'the other follower is told');
      assert.equal(log.read(sequences[0])?.topic, `${root}/a`);
      assert.match((await warned).message, /a follower failed \(test\)/);
    } finally {
      stopFaulty();
      stopOther();
    }
  });

  it('a message appended to the log by another component reaches MQTT subscribers, and a retained one is retained', async () => {
    const root = unique('appended');
    const live = await connectClient(server);
    const inbox = new Inbox(live);
    try {
      await subscribe(live, `${root}/#`, { qos: 1 });
      await log.append([{ topic: `${root}/live`, message: input('from the log') }]);
      const received = await inbox.next(`${root}/live`);
      assert.equal(received.payload.toString(), 'from the log');
      assert.equal(received.packet.qos, 1);

      await log.append([{ topic: `${root}/kept`, message: input('retained from the log', true) }]);
      await inbox.next(`${root}/kept`);
      const later = await connectClient(server);
      const laterInbox = new Inbox(later);
      try {
        await subscribe(later, `${root}/kept`, { qos: 1 });
        const retained = await laterInbox.next(`${root}/kept`);
        assert.equal(retained.payload.toString(), 'retained from the log');
        assert.equal(retained.packet.retain, true, 'sent as the retained message of its topic');
      } finally {
        await closeClients(later);
      }
    } finally {
      await closeClients(live);
    }
  });
});
