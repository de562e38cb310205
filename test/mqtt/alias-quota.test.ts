/**
 * MQTT 5 inbound topic aliases hold at most 1 MiB of topic names per connection
 * (packets/publish.ts INBOUND_ALIAS_BYTES): beyond, the server sends DISCONNECT 0x97 Quota
 * exceeded and closes (docs/mqtt.md, "What closes a connection"). Remapping an alias gives back
 * what its old topic held, so a client that reuses its aliases is never cut.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { WireClient, startPubSubBroker, unique } from './pubsub-helpers';

/** Topic names of about 62 KB: seventeen of them hold more than 1 MiB, sixteen do not. */
const LONG = 'x'.repeat(62_000);

describe('mqtt: inbound topic alias quota', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startPubSubBroker();
  });
  after(() => server?.close());

  const publishWithAlias = (wire: WireClient, topic: string, alias: number, messageId: number): void => {
    wire.send({ cmd: 'publish', topic, qos: 1, messageId, payload: Buffer.from('x'), retain: false, dup: false, properties: { topicAlias: alias } });
  };

  it('aliases holding more than 1 MiB of topic names end the connection with DISCONNECT 0x97', async () => {
    const root = unique('alias-quota');
    const { wire } = await WireClient.connect(server, 5);
    try {
      for (let alias = 1; alias <= 16; alias++) {
        publishWithAlias(wire, `${root}/${alias}/${LONG}`, alias, alias);
        assert.equal((await wire.next('puback'))?.messageId, alias, `alias ${alias} is within the quota`);
      }
      publishWithAlias(wire, `${root}/17/${LONG}`, 17, 17);
      assert.equal(await wire.next('puback', (packet) => packet.messageId === 17), undefined, 'closed, not acknowledged');
      assert.equal(wire.disconnect?.reasonCode, 0x97);
    } finally {
      wire.destroy();
    }
  });

  it('remapping one alias to ever new long topics stays within the quota', async () => {
    const root = unique('alias-remap');
    const { wire } = await WireClient.connect(server, 5);
    try {
      for (let messageId = 1; messageId <= 20; messageId++) {
        publishWithAlias(wire, `${root}/${messageId}/${LONG}`, 1, messageId);
        assert.equal((await wire.next('puback'))?.messageId, messageId);
      }
      assert.equal(wire.disconnect, undefined);
    } finally {
      wire.destroy();
    }
  });
});
