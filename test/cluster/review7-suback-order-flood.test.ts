/**
 * review7: a flood of SUBSCRIBE and UNSUBSCRIBE packets on one connection, shared groups among
 * them, in a cluster. A SUBACK granting a shared subscription waits for its node's membership
 * announcement to come back from the stream (plugins/mqtt/packets/answer-order.ts); every later
 * SUBACK and UNSUBACK of the connection queues behind it, so the answers come in the packets'
 * order, none is lost, and the node keeps serving: after
 * the flood the group it left last delivers each message once, to its one member.
 *
 * The packets go out in one write on a raw socket (mqtt.js would match answers by packet id and
 * hide their order).
 */
import assert from 'node:assert/strict';
import type { Packet } from 'mqtt-packet';
import { connect } from '../helpers/cluster-clients';
import { clusterForSuite } from '../helpers/nats-cluster';
import { RawClient, connectPacket } from '../mqtt/mqtt-helpers';
import mqttPacket from 'mqtt-packet';

const PACKETS = 900;
const GROUPS = 30;

describe('review7 cluster: SUBACK and UNSUBACK order under a flood of SUBSCRIBEs to shared groups', function () {
  this.timeout(Number(process.env.CLUSTER_TEST_TIMEOUT_MS ?? 240_000));
  const cluster = clusterForSuite();

  it(`answers ${PACKETS} SUBSCRIBE / UNSUBSCRIBE packets (shared and not, ${GROUPS} groups) in their order, then delivers a group's message once`, async function () {
    const [node1, node2] = cluster().nodes;
    const raw = await RawClient.open(Number(new URL(node1.mqtt).port));
    raw.send(connectPacket({ clientId: 'r7-flood', clean: true }));
    const connack = await raw.next('connack');
    assert.equal(connack?.returnCode, 0);

    // Packet i (id i): a shared SUBSCRIBE to group i % GROUPS, its UNSUBSCRIBE, or a plain SUBSCRIBE, in turn.
    const expected: Array<{ cmd: string; messageId: number }> = [];
    const bytes: Buffer[] = [];
    for (let id = 1; id <= PACKETS; id++) {
      const group = `$share/r7g${Math.floor(id / 3) % GROUPS}/r7flood/t`;
      let packet: Packet;
      if (id % 3 === 0) packet = { cmd: 'subscribe', messageId: id, subscriptions: [{ topic: group, qos: 1 }] } as Packet;
      else if (id % 3 === 1) packet = { cmd: 'unsubscribe', messageId: id, unsubscriptions: [`$share/r7g${Math.floor((id - 1) / 3) % GROUPS}/r7flood/t`] } as Packet;
      else packet = { cmd: 'subscribe', messageId: id, subscriptions: [{ topic: `r7flood/plain/${id % 7}`, qos: 1 }] } as Packet;
      expected.push({ cmd: packet.cmd === 'subscribe' ? 'suback' : 'unsuback', messageId: id });
      bytes.push(mqttPacket.generate(packet));
    }
    // The last one joins group "r7last" alone.
    bytes.push(mqttPacket.generate({ cmd: 'subscribe', messageId: PACKETS + 1, subscriptions: [{ topic: '$share/r7last/r7flood/last', qos: 1 }] } as Packet));
    expected.push({ cmd: 'suback', messageId: PACKETS + 1 });
    raw.write(Buffer.concat(bytes));

    const answers: Array<{ cmd: string; messageId: number }> = [];
    while (answers.length < expected.length) {
      const index = raw.packets.findIndex((packet) => packet.cmd === 'suback' || packet.cmd === 'unsuback');
      if (index < 0) {
        assert.ok(!raw.socket.destroyed, `the connection closed after ${answers.length} answers`);
        await raw.nextChunk();
        continue;
      }
      const [packet] = raw.packets.splice(index, 1) as Array<{ cmd: string; messageId: number }>;
      answers.push({ cmd: packet.cmd, messageId: packet.messageId });
    }
    assert.deepEqual(answers, expected, 'the answers came in the packets\' order');

    // Still serving: a message of the group joined last, published through node2, comes once.
    const publisher = await connect(node2.mqtt, { clientId: 'r7-flood-pub' });
    await publisher.publishAsync('r7flood/last', 'once', { qos: 1 });
    // A barrier behind it: a plain subscription of the flooded connection gets it after the group's message.
    await publisher.publishAsync('r7flood/plain/1', 'after', { qos: 1 });
    for (;;) {
      const last = raw.packets.filter((packet) => packet.cmd === 'publish').map((packet) => (packet as { topic: string }).topic);
      if (last.includes('r7flood/plain/1')) break;
      assert.ok(!raw.socket.destroyed, 'the connection closed before the messages came');
      await raw.nextChunk();
    }
    const publishes = raw.packets.filter((packet) => packet.cmd === 'publish').map((packet) => `${(packet as { topic: string }).topic} ${String((packet as { payload: Buffer }).payload)}`);
    assert.deepEqual(publishes, ['r7flood/last once', 'r7flood/plain/1 after']);
    publisher.end(true);
    raw.destroy();
  });
});
