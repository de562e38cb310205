/**
 * A persistent session belongs to the account that made it, connected or not: another account
 * resumes it (or ends it with a clean start) only with `mq.takeover` on its client id; without,
 * CONNACK 0x87 (MQTT 5) / 0x05 (3.1.1), nothing is delivered to it, and the owner later gets every
 * queued and in-flight message. The owner is stored with the session (it holds across a restart).
 * The MQ session actions answer a session not permitted exactly as an unknown name (14237).
 */
import assert from 'node:assert/strict';
import mqtt, { type IClientOptions } from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { startServer, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import { fails, login, ok, send } from '../actions/action-client';
import { MQ_PLUGINS, mq, storedCount } from '../actions/mq/mq-client';
import { MQTT_PORTS, brokerUrl } from './mqtt-helpers';
import { closeClient, dropClient, openClient, publishOk, rawSession, rawSubscribe, subscribeOk, uniqueName, type Client } from './session-helpers';

const SETTINGS: Partial<Settings> = {
  plugins: MQ_PLUGINS,
  ...MQTT_PORTS,
  roles: [
    { name: 'sensors', grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.publish', 'mq.subscribe'], resources: ['topic:owned/#'] }] },
    { name: 'takers', grants: [{ commands: ['mq.takeover'], resources: ['client:*'] }] },
  ],
};

const ALICE = { username: 'alice', password: 'alice-password' };
/** The built-in reader: `mq.connect` on every client id, no `mq.subscribe` on these topics. */
const BOB = { username: 'bob', password: 'bob-password' };
/** Allowed what alice is, and `mq.takeover` too. */
const CAROL = { username: 'carol', password: 'carol-password' };
/** Allowed what alice is (mq.connect on every client id), without `mq.takeover`. */
const DAVE = { username: 'dave', password: 'dave-password' };

const LEVELS = [4, 5] as const;
const NOT_AUTHORIZED = { 4: 0x05, 5: 0x87 } as const;

function persistent(clientId: string, protocolVersion: 4 | 5): IClientOptions {
  return protocolVersion === 5
    ? { clientId, protocolVersion, clean: false, properties: { sessionExpiryInterval: 3600 } }
    : { clientId, protocolVersion, clean: false };
}

/** A CONNECT through the `mqtt` package that must be refused: its CONNACK code and every packet it got. */
function refusedConnect(server: TestServer, options: IClientOptions): Promise<{ code: number; received: string[] }> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(brokerUrl(server), { reconnectPeriod: 0, connectTimeout: 10_000, ...options });
    const received: string[] = [];
    let code: number | undefined;
    client.on('packetreceive', (packet: any) => {
      received.push(packet.cmd);
      if (packet.cmd === 'connack') code = packet.returnCode ?? packet.reasonCode;
    });
    client.on('error', () => undefined);
    client.once('connect', () => {
      client.end(true);
      reject(new Error('the CONNECT was accepted'));
    });
    client.once('close', () => {
      client.end(true);
      if (code === undefined) reject(new Error('closed without a CONNACK'));
      else resolve({ code, received });
    });
  });
}

describe('mqtt 18: a persistent session belongs to its account, connected or not', function () {
  this.timeout(60_000);
  let server: TestServer;
  let publisher: Client;

  async function start(dataDir?: string): Promise<void> {
    server = await startServer({ ...SETTINGS, ...(dataDir ? { data_dir: dataDir } : {}) });
    publisher = await openClient(server, { clientId: uniqueName('publisher') });
  }

  before(async () => {
    await start();
    await server.engine.accounts.create(ALICE.username, ALICE.password, ['sensors']);
    await server.engine.accounts.create(BOB.username, BOB.password, ['reader']);
    await server.engine.accounts.create(CAROL.username, CAROL.password, ['sensors', 'takers']);
    await server.engine.accounts.create(DAVE.username, DAVE.password, ['sensors']);
  });

  after(async () => {
    await publisher?.client.endAsync(true);
    await server?.close();
  });

  /** Alice's persistent session subscribed to `topic`, left offline with `payloads` queued. */
  async function offlineSessionWithQueue(clientId: string, topic: string, protocolVersion: 4 | 5, payloads: string[]): Promise<void> {
    const alice = await openClient(server, { ...ALICE, ...persistent(clientId, protocolVersion) });
    await subscribeOk(alice.client, topic, { qos: 1 });
    await closeClient(alice);
    for (const payload of payloads) await publishOk(publisher.client, topic, payload, { qos: 1 });
  }

  /** Alice resumes: the session is present and every queued message comes, in order. */
  async function aliceGetsQueue(clientId: string, protocolVersion: 4 | 5, payloads: string[]): Promise<void> {
    const alice = await openClient(server, { ...ALICE, ...persistent(clientId, protocolVersion) });
    try {
      assert.equal(alice.connack.sessionPresent, true, 'the session is still there for its owner');
      assert.deepEqual((await alice.inbox.waitForCount(payloads.length)).map((m) => m.payload), payloads);
    } finally {
      await closeClient(alice);
    }
  }

  for (const protocolVersion of LEVELS) {
    const level = protocolVersion === 5 ? 'MQTT 5' : 'MQTT 3.1.1';

    it(`${level}: another account (reader) resuming an offline session is refused (0x${NOT_AUTHORIZED[protocolVersion].toString(16)}) and gets nothing; the owner then gets every queued message`, async () => {
      const clientId = uniqueName('offline');
      const topic = `owned/${clientId}`;
      await offlineSessionWithQueue(clientId, topic, protocolVersion, ['q1', 'q2', 'q3']);
      const refused = await refusedConnect(server, { ...BOB, ...persistent(clientId, protocolVersion) });
      assert.equal(refused.code, NOT_AUTHORIZED[protocolVersion]);
      assert.deepEqual(refused.received, ['connack'], 'nothing but the refusal');
      await aliceGetsQueue(clientId, protocolVersion, ['q1', 'q2', 'q3']);
    });

    it(`${level}: another account's clean start on an offline session is refused too; the session and its queue stay`, async () => {
      const clientId = uniqueName('clean');
      const topic = `owned/${clientId}`;
      await offlineSessionWithQueue(clientId, topic, protocolVersion, ['c1', 'c2']);
      const refused = await refusedConnect(server, { ...BOB, clientId, protocolVersion, clean: true });
      assert.equal(refused.code, NOT_AUTHORIZED[protocolVersion]);
      await aliceGetsQueue(clientId, protocolVersion, ['c1', 'c2']);
    });

    it(`${level}: a message in flight to the owner is not handed to another account; the owner gets it again (DUP, same packet id)`, async () => {
      const clientId = uniqueName('inflight');
      const topic = `owned/${clientId}`;
      const fields = { clientId, protocolVersion, clean: false, username: ALICE.username, password: Buffer.from(ALICE.password), ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 3600 } } : {}) };
      const first = await rawSession(server, fields);
      await rawSubscribe(first.raw, topic, 1, protocolVersion);
      await publishOk(publisher.client, topic, 'in flight', { qos: 1 });
      const held = await first.raw.next('publish');
      first.raw.destroy(); // no PUBACK: the message stays in flight
      await first.raw.closed;
      const refused = await refusedConnect(server, { ...BOB, ...persistent(clientId, protocolVersion) });
      assert.equal(refused.code, NOT_AUTHORIZED[protocolVersion]);
      assert.deepEqual(refused.received, ['connack']);
      const back = await rawSession(server, fields);
      assert.equal(back.connack.sessionPresent, true);
      const again = await back.raw.next('publish');
      assert.equal(again.payload.toString(), 'in flight');
      assert.equal(again.dup, true);
      assert.equal(again.messageId, held.messageId);
      back.raw.send({ cmd: 'puback', messageId: again.messageId } as Packet, protocolVersion);
      back.raw.destroy();
      await back.raw.closed;
    });

    it(`${level}: another account is refused while the owner is connected; the owner stays connected and keeps receiving`, async () => {
      const clientId = uniqueName('online');
      const topic = `owned/${clientId}`;
      const alice = await openClient(server, { ...ALICE, ...persistent(clientId, protocolVersion) });
      try {
        await subscribeOk(alice.client, topic, { qos: 1 });
        const refused = await refusedConnect(server, { ...BOB, ...persistent(clientId, protocolVersion) });
        assert.equal(refused.code, NOT_AUTHORIZED[protocolVersion]);
        await publishOk(publisher.client, topic, 'still mine', { qos: 1 });
        await alice.inbox.waitForPayload('still mine');
        assert.ok(alice.client.connected);
      } finally {
        await closeClient(alice);
      }
    });

    it(`${level}: an account with mq.takeover resumes another's offline session and gets its queue; the session stays the owner's`, async () => {
      const clientId = uniqueName('taken');
      const topic = `owned/${clientId}`;
      await offlineSessionWithQueue(clientId, topic, protocolVersion, ['t1', 't2']);
      const carol = await openClient(server, { ...CAROL, ...persistent(clientId, protocolVersion) });
      assert.equal(carol.connack.sessionPresent, true);
      assert.deepEqual((await carol.inbox.waitForCount(2)).map((m) => m.payload), ['t1', 't2']);
      await closeClient(carol);
      const core = server.engine.need('messaging');
      assert.equal(core.sessions.get(clientId)?.owner, 'alice', 'a takeover does not change the owner');
      // The owner needs no mq.takeover to come back.
      await publishOk(publisher.client, topic, 't3', { qos: 1 });
      await aliceGetsQueue(clientId, protocolVersion, ['t3']);
    });
  }

  it('an account with mq.takeover takes over a connected owner (who is disconnected), and the owner takes it back without mq.takeover', async () => {
    const clientId = uniqueName('handover');
    const topic = `owned/${clientId}`;
    const alice = await openClient(server, { ...ALICE, ...persistent(clientId, 5) });
    await subscribeOk(alice.client, topic, { qos: 1 });
    const carol = await openClient(server, { ...CAROL, ...persistent(clientId, 5) });
    assert.equal(carol.connack.sessionPresent, true);
    await alice.closed;
    const back = await openClient(server, { ...ALICE, ...persistent(clientId, 5) });
    assert.equal(back.connack.sessionPresent, true);
    await carol.closed;
    await publishOk(publisher.client, topic, 'back home', { qos: 1 });
    await back.inbox.waitForPayload('back home');
    await closeClient(back);
  });

  it('the owner is stored with the session: after a restart another account is still refused, and the owner gets the queue', async () => {
    const clientId = uniqueName('restart');
    const topic = `owned/${clientId}`;
    await offlineSessionWithQueue(clientId, topic, 5, ['r1']);
    // Carol (mq.takeover) used it last: the session is still alice's after the restart.
    const carol = await openClient(server, { ...CAROL, ...persistent(clientId, 5) });
    await carol.inbox.waitForPayload('r1');
    await dropClient(carol);
    await publishOk(publisher.client, topic, 'r2', { qos: 1 });
    await publisher.client.endAsync();
    await server.close({ keepData: true });
    await start(server.dataDir);

    const refused = await refusedConnect(server, { ...BOB, ...persistent(clientId, 5) });
    assert.equal(refused.code, 0x87);
    assert.deepEqual(refused.received, ['connack']);
    await aliceGetsQueue(clientId, 5, ['r2']);
  });

  describe('MQ session actions (POST /api)', () => {
    /** The response envelope with the client name written as <name>: unknown and not permitted must not differ in anything else. */
    async function answer(token: string, action: string, params: Record<string, unknown>, clientName: string): Promise<string> {
      const envelope = mq(action, token, JSON.parse(JSON.stringify(params).split('<name>').join(clientName)), { requestId: 7 });
      const response = await send(server, envelope); // HTTP 200, as every parsed envelope
      return JSON.stringify(response).split(clientName).join('<name>');
    }

    const ACTIONS: Array<[string, Record<string, unknown>]> = [
      ['subscribeToMq', { clientName: '<name>', subscriptionActions: [{ subscriptionAction: 'add', topicFilter: '#' }] }],
      ['getMessagesFromMqApiSession', { clientName: '<name>' }],
      ['alterMqSession', { clientName: '<name>', startFrom: 'head' }],
      ['describeMqSessions', { clientNames: ['<name>'] }],
      ['disconnectMqClient', { clientName: '<name>' }],
      ['deleteMqSession', { clientName: '<name>' }],
    ];

    it("another account's session, connected or not, is answered exactly as an unknown name (14237), and stays as it was", async () => {
      const bob = await login(server, BOB.username, BOB.password);
      const clientId = uniqueName('probed');
      const topic = `owned/${clientId}`;
      await offlineSessionWithQueue(clientId, topic, 4, ['p1']);
      const unknown = uniqueName('nobody');
      for (const [action, params] of ACTIONS) {
        const expected = await answer(bob, action, params, unknown);
        assert.match(expected, /"errorCode":14237/, `${action} on an unknown name`);
        assert.deepEqual(await answer(bob, action, params, clientId), expected, `${action} on alice's offline session`);
      }
      const listed = await ok(server, mq('listMqSessions', bob));
      assert.ok(!listed.sessions.some((s: any) => s.clientName === clientId), 'not listed to bob');

      // Connected: the same answers, and alice's connection is left alone.
      const alice = await openClient(server, { ...ALICE, ...persistent(clientId, 4) });
      assert.equal(alice.connack.sessionPresent, true);
      await alice.inbox.waitForPayload('p1');
      for (const [action, params] of ACTIONS) {
        assert.deepEqual(await answer(bob, action, params, clientId), await answer(bob, action, params, unknown), `${action} on alice's connected session`);
      }
      assert.ok(alice.client.connected, 'not disconnected by bob');
      const described = await ok(server, mq('describeMqSessions', await login(server, ALICE.username, ALICE.password), { clientNames: [clientId] }));
      assert.deepEqual(described.sessions[0].subscriptions.map((s: any) => s.topicFilter), [topic], 'bob added no subscription');
      assert.equal(described.sessions[0].owner, 'alice');
      await publishOk(publisher.client, topic, 'p2', { qos: 1 });
      await alice.inbox.waitForPayload('p2');
      await closeClient(alice);
    });

    it("publishMessagesToMq as another account's session (clientName) is refused without mq.takeover, and nothing is stored", async () => {
      const clientId = uniqueName('posed');
      const topic = `owned/${clientId}`;
      await offlineSessionWithQueue(clientId, topic, 4, []);
      const publish = (token: string) => mq('publishMessagesToMq', token, { clientName: clientId, topic, messages: [{ payload: { posedAs: clientId } }] });
      await fails(server, publish(await login(server, DAVE.username, DAVE.password)), 12030);
      assert.equal(storedCount(server, topic), 0, 'dave stored nothing as alice');
      // The owner, and an account with mq.takeover, may publish as it.
      await ok(server, publish(await login(server, ALICE.username, ALICE.password)));
      await ok(server, publish(await login(server, CAROL.username, CAROL.password)));
      assert.equal(storedCount(server, topic), 2);
    });

    it('with mq.takeover the actions reach another account\'s session', async () => {
      const carol = await login(server, CAROL.username, CAROL.password);
      const clientId = uniqueName('reached');
      await offlineSessionWithQueue(clientId, `owned/${clientId}`, 4, []);
      const described = await ok(server, mq('describeMqSessions', carol, { clientNames: [clientId] }));
      assert.equal(described.sessions[0].owner, 'alice');
      const listed = await ok(server, mq('listMqSessions', carol));
      assert.ok(listed.sessions.some((s: any) => s.clientName === clientId));
    });
  });
});
