/**
 * A shared subscription group gets each message once across the cluster also while its members
 * join (docs/cluster.md, "Shared subscriptions"): members on two nodes join a group nobody holds
 * while messages are on their way to those nodes, once when the group is new and once after one
 * of the nodes restarted (it knows none of the group's history). Only the membership in force at
 * a message, as applied from the stream, decides who delivers it: a message numbered before any
 * announcement of the group goes to nobody, and a member's SUBACK waits until its node's
 * announcement is applied, so every message published after the SUBACKs arrives exactly once.
 *
 * The window is made wide: both members' nodes are stopped (SIGSTOP) while a
 * publisher on the third node stores messages of the group's topic and the members' SUBSCRIBEs
 * wait in the nodes' sockets; resumed, each node reads the SUBSCRIBE and applies those messages
 * from the stream before its announcement, which comes after them in the stream. And a
 * publisher keeps publishing while 40 new groups are joined on two nodes at the same moment.
 */
import assert from 'node:assert/strict';
import type { MqttClient } from 'mqtt';
import { connect, received } from '../helpers/cluster-clients';
import { clusterForSuite, type EngineNode } from '../helpers/nats-cluster';

const GROUP = '$share/joining/join/#';
const BEFORE = 300;
const AFTER = 300;

/** Told of every payload a member gets on `join/t`. */
const arrivals = new Set<() => void>();

/** Payloads each member got on `join/t`. */
function collect(client: MqttClient): string[] {
  const got: string[] = [];
  client.on('message', (topic, payload) => {
    if (topic !== 'join/t') return;
    got.push(payload.toString());
    for (const check of arrivals) check();
  });
  return got;
}

/** Resolves once the members together got `count` different payloads starting with `prefix`. */
function untilAll(got: string[][], prefix: string, count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (new Set(got.flat().filter((payload) => payload.startsWith(prefix))).size < count) return;
      arrivals.delete(check);
      resolve();
    };
    arrivals.add(check);
    check();
  });
}

/** Each member publishes a barrier after the last thing it did; once every member has every barrier, every node has applied what came before. */
async function barrierAll(members: MqttClient[], name: string): Promise<void> {
  const arrived = members.map((client) => Promise.all(members.map((_, j) => received(client, `joinbar/${name}-${j}`))));
  await Promise.all(members.map((client, j) => client.publishAsync(`joinbar/${name}-${j}`, 'x', { qos: 1 })));
  await Promise.all(arrived);
}

/**
 * With the members' nodes stopped, `BEFORE` messages are stored through the publisher's node and
 * both members send their SUBSCRIBE; the nodes resume; once both SUBACKs are in, `AFTER` more
 * messages and a trailing barrier (each node delivers in log order) are published. Returns what
 * the members got, together.
 */
async function joinWhileMessagesWait(nodes: EngineNode[], members: MqttClient[], got: string[][], publisher: MqttClient, tag: string): Promise<string[]> {
  for (const list of got) list.length = 0;
  const children = nodes.map((node) => node.process!.child);
  let subscribed: Promise<unknown> = Promise.resolve();
  for (const child of children) child.kill('SIGSTOP');
  try {
    const sends: Array<Promise<unknown>> = [];
    for (let n = 0; n < BEFORE; n++) sends.push(publisher.publishAsync('join/t', `${tag}-before-${n}`, { qos: 1 }));
    await Promise.all(sends);
    subscribed = Promise.all(members.map((client) => client.subscribeAsync(GROUP, { qos: 1 })));
  } finally {
    for (const child of children) child.kill('SIGCONT');
  }
  await subscribed;
  const sends: Array<Promise<unknown>> = [];
  for (let n = 0; n < AFTER; n++) sends.push(publisher.publishAsync('join/t', `${tag}-after-${n}`, { qos: 1 }));
  await Promise.all(sends);
  // Every message after the SUBACKs, then a trailing barrier: a copy any node was going to deliver
  // twice comes before it (each node delivers in log order).
  await untilAll(got, `${tag}-after-`, AFTER);
  const end = members.map((client) => received(client, `joinbar/${tag}-end`));
  await publisher.publishAsync(`joinbar/${tag}-end`, 'x', { qos: 1 });
  await Promise.all(end);
  return got.flat();
}

/** The payloads that came more than once. */
function repeated(all: string[]): string[] {
  const counts = new Map<string, number>();
  for (const payload of all) counts.set(payload, (counts.get(payload) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1).map(([payload]) => payload);
}

function assertOnceEach(all: string[], tag: string, got: string[][]): void {
  assert.deepEqual(repeated(all).slice(0, 10), [], `no message of the group delivered twice (${got.map((g) => g.length).join(' + ')} received)`);
  const after = new Set(all.filter((payload) => payload.startsWith(`${tag}-after-`)));
  assert.equal(after.size, AFTER, `every message published after both SUBACKs arrived (${after.size} of ${AFTER})`);
}

describe('cluster: a shared group gets each message once while its members join', function () {
  this.timeout(240_000);
  const cluster = clusterForSuite();
  let publisher: MqttClient;
  let member1: MqttClient;
  const got: string[][] = [[], []];

  it(`members on node1 and node2 join a new group while ${BEFORE} messages wait for both nodes: no message is delivered twice, and each of ${AFTER} published after the SUBACKs arrives once`, async function () {
    const [node1, node2, node3] = cluster().nodes;
    member1 = await connect(node1.mqtt, { clientId: 'join-m1' });
    const member2 = await connect(node2.mqtt, { clientId: 'join-m2' });
    publisher = await connect(node3.mqtt, { clientId: 'join-pub' });
    got[0] = collect(member1);
    got[1] = collect(member2);
    for (const client of [member1, member2, publisher]) await client.subscribeAsync('joinbar/#', { qos: 1 });
    await barrierAll([member1, member2, publisher], 'ready');

    const all = await joinWhileMessagesWait([node1, node2], [member1, member2], got, publisher, 'new');
    assertOnceEach(all, 'new', got);
    await member2.endAsync();
  });

  it('40 new groups, each joined by members on node1 and node2 at the same moment while a publisher on node3 keeps publishing: no message reaches a group twice', async function () {
    const [node1, node2, node3] = cluster().nodes;
    const ROUNDS = 40;
    const members = [
      await connect(node1.mqtt, { clientId: 'flood-m1', protocolVersion: 5 }),
      await connect(node2.mqtt, { clientId: 'flood-m2', protocolVersion: 5 }),
    ];
    const flooder = await connect(node3.mqtt, { clientId: 'flood-pub' });
    // Copies per group (its subscription identifier) and payload: a group's copy twice is a duplicate.
    const copies = new Map<string, number>();
    for (const client of members) {
      client.on('message', (topic, payload, packet) => {
        if (topic !== 'flood/t') return;
        for (const id of [packet.properties?.subscriptionIdentifier ?? []].flat()) {
          const key = `group ${id}: ${payload.toString()}`;
          copies.set(key, (copies.get(key) ?? 0) + 1);
        }
      });
      await client.subscribeAsync('floodbar/#', { qos: 1 });
    }
    let flowing = true;
    let sent = 0;
    const flood = (async () => {
      while (flowing) await Promise.all(Array.from({ length: 30 }, () => flooder.publishAsync('flood/t', String(sent++), { qos: 1 })));
    })();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const group = `$share/flood${round}/flood/#`;
        await Promise.all(members.map((client) => client.subscribeAsync(group, { qos: 1, properties: { subscriptionIdentifier: round + 1 } })));
        await Promise.all(members.map((client) => client.unsubscribeAsync(group)));
      }
    } finally {
      flowing = false;
      await flood;
    }
    const end = members.map((client) => received(client, 'floodbar/end'));
    await flooder.publishAsync('floodbar/end', 'x', { qos: 1 });
    await Promise.all(end);
    const twice = [...copies].filter(([, count]) => count > 1).map(([key]) => key);
    assert.deepEqual(twice.slice(0, 10), [], `no group got a message twice (${twice.length} duplicates among ${copies.size} deliveries of ${sent} messages)`);
    await Promise.all([...members, flooder].map((client) => client.endAsync()));
  });

  it(`after the group emptied and node2 restarted (it knows none of the group's history), members on node1 and node2 join again while ${BEFORE} messages wait: no message twice, each of ${AFTER} after the SUBACKs once`, async function () {
    const [node1, node2] = cluster().nodes;
    // The group empties: node1's member leaves (node2's left with its connection above).
    await member1.unsubscribeAsync(GROUP);
    await node2.stop('SIGTERM');
    await node2.start();
    const member2 = await connect(node2.mqtt, { clientId: 'join-m2b' });
    got[1] = collect(member2);
    await member2.subscribeAsync('joinbar/#', { qos: 1 });
    await barrierAll([member1, member2, publisher], 'restarted');

    const all = await joinWhileMessagesWait([node1, node2], [member1, member2], got, publisher, 'again');
    assertOnceEach(all, 'again', got);
    await Promise.all([member1, member2, publisher].map((client) => client.endAsync()));
  });
});
