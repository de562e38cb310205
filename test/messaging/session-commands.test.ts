/**
 * The session bus commands (mq.createApiSession, mq.readSession, mq.changeSubscriptions,
 * mq.deleteSession, mq.listSessions, mq.describeSessions) through engine.bus, with a real MQTT
 * client for the live-session cases.
 */
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import type { CommandContext } from '../../kernel/bus/command';
import type { Principal } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import type { TestServer } from '../helpers/server';
import { brokerUrl, startBroker } from '../mqtt/mqtt-helpers';
import { uniqueName } from '../mqtt/session-helpers';
import { ManualClock } from '../helpers/manual-clock';

const ADMIN: Principal = { account: 'admin', roles: ['admin'] };
const OTHER: Principal = { account: 'someone', roles: ['writer'] };
/** `mq.takeover` on every client name, `mq.subscribe` on `open/#` only. */
const TAKER: Principal = { account: 'taker', roles: ['taker'] };

describe('message core: session commands on the bus', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startBroker({
      roles: [
        { name: 'writer', grants: [{ commands: ['mq.connect', 'mq.publish', 'mq.subscribe'], resources: ['topic:#', 'client:*'] }] },
        { name: 'taker', grants: [{ commands: ['mq.connect', 'mq.takeover'], resources: ['client:*'] }, { commands: ['mq.subscribe'], resources: ['topic:open/#'] }] },
      ],
    } as never);
  });
  after(() => server?.close());

  function run<R>(command: string, params: unknown, principal = ADMIN): Promise<R> {
    const ctx: CommandContext = { principal, origin: 'test' };
    return server.engine.bus.execute<R>(command, params, ctx);
  }

  async function code(promise: Promise<unknown>): Promise<number> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof EngineError) return error.code;
      throw error;
    }
    throw new Error('it did not fail');
  }

  it('creates an MQ API session, subscribes it, reads it from its position; names in use are 14221; unknown ones 14237', async () => {
    const name = uniqueName('api');
    const topic = uniqueName('cmd/t');
    await run('mq.createApiSession', { clientName: name });
    assert.equal(await code(run('mq.createApiSession', { clientName: name })), 14221);
    const changed = await run<any>('mq.changeSubscriptions', { clientName: name, changes: [{ action: 'add', topicFilter: `${topic}/#`, qos: 1 }, { action: 'add', topicFilter: 'bad/#/filter' }] });
    assert.equal(changed.subscriptions[0].errorCode, 0);
    assert.notEqual(changed.subscriptions[1].errorCode, 0, 'a bad filter has its own error');
    await run('mq.publish', { messages: [{ topic: `${topic}/a`, payload: 'one' }, { topic: `${topic}/b`, payload: 'two' }] });
    const first = await run<any>('mq.readSession', { clientName: name, maxMessages: 1 });
    const text = (m: any) => Buffer.from(m.payload, 'hex').toString();
    assert.deepEqual(first.messages.map(text), ['one']);
    const rest = await run<any>('mq.readSession', { clientName: name });
    assert.deepEqual(rest.messages.map(text), ['two']);
    assert.equal(await code(run('mq.readSession', { clientName: uniqueName('none') })), 14237);
    assert.equal(await code(run('mq.changeSubscriptions', { clientName: uniqueName('none'), changes: [] })), 14237);
  });

  it('adds a subscription to a connected MQTT 3.1.1 client (with a subscription identifier), which stays connected and receives', async () => {
    const clientId = uniqueName('live');
    const topic = uniqueName('cmd/live');
    const client = await mqtt.connectAsync(brokerUrl(server), { protocolVersion: 4, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    try {
      const received = new Promise<string>((resolve) => client.once('message', (_t, payload) => resolve(payload.toString())));
      const changed = await run<any>('mq.changeSubscriptions', { clientName: clientId, changes: [{ action: 'add', topicFilter: topic, qos: 1, subscriptionIdentifier: 7 }] });
      assert.equal(changed.subscriptions[0].errorCode, 0);
      await run('mq.publish', { messages: [{ topic, payload: 'to the live client' }] });
      assert.equal(await received, 'to the live client');
      assert.ok(client.connected);
      const described = await run<any>('mq.describeSessions', { clientNames: [clientId] });
      assert.equal(described.sessions[0].connected, true);
      assert.equal(described.sessions[0].subscriptions[0].topicFilter, topic);
      assert.equal(described.sessions[0].messagesReceived, 1);
    } finally {
      await client.endAsync();
    }
  });

  it("another account's session needs mq.takeover and is answered as an unknown name without it (14237); listSessions shows only what the caller may use; deleteSession ends it", async () => {
    const name = uniqueName('owned');
    await run('mq.createApiSession', { clientName: name });
    for (const [command, params] of [['mq.readSession', {}], ['mq.changeSubscriptions', { changes: [] }], ['mq.repositionSession', { startFrom: 'head' }], ['mq.deleteSession', {}]] as const) {
      assert.equal(await code(run(command, { clientName: name, ...params }, OTHER)), 14237, `${command}: not permitted, told as unknown`);
    }
    assert.equal(await code(run('mq.describeSessions', { clientNames: [name] }, OTHER)), 14237);
    const listed = await run<any>('mq.listSessions', {}, OTHER);
    assert.ok(!listed.sessions.some((s: any) => s.clientName === name));
    const own = uniqueName('mine');
    await run('mq.createApiSession', { clientName: own }, OTHER);
    assert.ok((await run<any>('mq.listSessions', {}, OTHER)).sessions.some((s: any) => s.clientName === own));
    await run('mq.deleteSession', { clientName: name });
    assert.equal(await code(run('mq.readSession', { clientName: name })), 14237);
  });

  it("an account with mq.takeover reading another's MQ API session gets only what its own roles let it receive", async () => {
    const name = uniqueName('taken');
    const root = uniqueName('t');
    await run('mq.createApiSession', { clientName: name });
    await run('mq.changeSubscriptions', { clientName: name, changes: [{ action: 'add', topicFilter: `open/${root}` }, { action: 'add', topicFilter: `closed/${root}` }] });
    await run('mq.publish', { messages: [{ topic: `closed/${root}`, payload: 'not for the taker' }, { topic: `open/${root}`, payload: 'for anyone' }] });
    const read = await run<any>('mq.readSession', { clientName: name }, TAKER);
    assert.deepEqual(read.messages.map((m: any) => Buffer.from(m.payload, 'hex').toString()), ['for anyone']);
    const described = await run<any>('mq.describeSessions', { clientNames: [name] }, TAKER);
    assert.equal(described.sessions[0].owner, 'admin', 'still the owner\'s');
  });

  it('a subscription with includeExpiredMessages returns expired messages marked; binaryFormat per subscription', async () => {
    const clock = new ManualClock();
    const timed = await startBroker({}, { clock });
    try {
      const exec = <R>(command: string, params: unknown) => timed.engine.bus.execute<R>(command, params, { principal: ADMIN, origin: 'test' });
      const keep = uniqueName('keep');
      const drop = uniqueName('drop');
      const topic = uniqueName('cmd/expiring');
      for (const clientName of [keep, drop]) await exec('mq.createApiSession', { clientName });
      await exec('mq.changeSubscriptions', { clientName: keep, changes: [{ action: 'add', topicFilter: topic, includeExpiredMessages: true, binaryFormat: 'base64' }] });
      await exec('mq.changeSubscriptions', { clientName: drop, changes: [{ action: 'add', topicFilter: topic }] });
      await exec('mq.publish', { messages: [{ topic, payload: 'short', messageExpiryInterval: 10 }, { topic, payload: 'long' }] });
      clock.advanceSeconds(11);
      const kept = await exec<any>('mq.readSession', { clientName: keep });
      assert.deepEqual(kept.messages.map((m: any) => [Buffer.from(m.payload, 'base64').toString(), m.messageHasExpired === true]), [['short', true], ['long', false]]);
      const dropped = await exec<any>('mq.readSession', { clientName: drop });
      assert.deepEqual(dropped.messages.map((m: any) => Buffer.from(m.payload, 'hex').toString()), ['long']);
    } finally {
      await timed.close();
    }
  });
});
