/**
 * A turn's record goes out with a `Nats-Msg-Id` header, and NATS counts the header in
 * `max_payload`: a record whose bytes alone fit but whose bytes and header do not is refused by
 * the client before anything is sent (nats-core's publish throws "max_payload size exceeded").
 * The turn writer must then not tell its writers that the write "may have been stored", nor keep
 * sending it until the deadline: it is either sent (and stored) or refused as too large (not
 * stored). The stream must hold it exactly when the writer says it was stored.
 *
 * The TurnWriter runs here against a real nats-server with JetStream (one server, the stream
 * ENGINE with one replica, a small max_payload). Nothing applies the stream: a record stored is
 * answered "was stored, and every node will apply it" once the writer's wait for its applier ends.
 */
import assert from 'node:assert/strict';
import { ensureStream, openLink, STREAM, type ClusterLink, type LinkOptions } from '../../plugins/cluster-nats/stream';
import { TurnWriter } from '../../plugins/cluster-nats/turn-writer';
import { encodeRecord } from '../../plugins/cluster-nats/record-codec';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { EngineError } from '../../kernel/errors';
import { NatsServer } from '../helpers/nats-cluster';

const quiet = { info: () => undefined, warn: () => undefined };
const TIMEOUT_MS = 1500;

describe('cluster: a record that fits max_payload only without its Nats-Msg-Id header', function () {
  this.timeout(60_000);
  let nats: NatsServer;
  let link: ClusterLink;

  before(async () => {
    nats = await NatsServer.alone('maxpayload', ['max_payload: 64KB']);
    const options: LinkOptions = { servers: [nats.url], node: 'payload-node', replicas: 1, timeoutMs: TIMEOUT_MS, log: quiet };
    link = await openLink(options);
    await ensureStream(link, options, performance.now() + 30_000);
  });

  after(async () => {
    link?.writes.close();
    await link?.nc.close().catch(() => undefined);
    await nats?.remove();
  });

  it('is sent and stored, or refused as not stored; never "may have been stored" for a record that was never sent', async () => {
    const limit = link.nc.info!.max_payload;
    // A state.put whose record takes exactly max_payload bytes (the header comes on top).
    let size = limit - 64;
    let entry: OperationEntry = { op: 'state.put', key: 'k', value: 'x'.repeat(size) };
    for (let i = 0; i < 200 && encodeRecord([entry]).length !== limit; i++) {
      size += limit - encodeRecord([entry]).length;
      entry = { op: 'state.put', key: 'k', value: 'x'.repeat(size) };
    }
    assert.equal(encodeRecord([entry]).length, limit);

    const writer = new TurnWriter(link, 'payload-node', TIMEOUT_MS);
    const error = await writer.forward(entry).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof EngineError, String(error));
    const { stored, reason } = error.details as { stored: string; reason: string };
    const held = (await link.jsm.streams.info(STREAM)).state.messages;
    assert.notEqual(stored, 'unknown', `the writer said the outcome is unknown (${reason}), the stream holds ${held} record(s)`);
    assert.equal(held, stored === 'yes' ? 1 : 0, `told stored: ${stored} (${reason}), the stream holds ${held}`);
    await writer.close();
  });
});
