/**
 * A node whose event loop stalls (a long GC pause, a busy callback) for longer than half a lease
 * runs, after the stall, the rest of that turn and its setImmediate callbacks before its fence
 * timer: so the turn writer, which publishes a turn's record from setImmediate, asks whether the
 * node still holds its lease (docs/cluster.md, "A node paused"). A turn made after the stall is
 * refused (CLUSTER_UNAVAILABLE, was not stored), the node fences first, and the stream holds
 * nothing of it.
 *
 * NodeLiveness, SessionClaims and the TurnWriter run here against a real nats-server with
 * JetStream (one server, the stream ENGINE with one replica). The stall is a synchronous loop that
 * runs until the clock has passed half a lease after the first renewal was answered: no timer or
 * event can run meanwhile, as in a GC pause.
 */
import assert from 'node:assert/strict';
import { NodeLiveness } from '../../plugins/cluster-nats/node-liveness';
import { SessionClaims } from '../../plugins/cluster-nats/session-claims';
import { ensureStream, openLink, STREAM, type ClusterLink, type LinkOptions } from '../../plugins/cluster-nats/stream';
import { TurnWriter } from '../../plugins/cluster-nats/turn-writer';
import type { SessionOwnershipListener } from '../../kernel/messaging/session-ownership';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import { EngineError } from '../../kernel/errors';
import { NatsServer } from '../helpers/nats-cluster';

const LEASE_MS = 2000;
const quiet = { info: () => undefined, warn: () => undefined };
const noState = { entries: () => [][Symbol.iterator](), get: () => undefined, put: async () => undefined } as unknown as LogStatePort;

describe('cluster: a turn of writes made after a stall longer than half a lease', function () {
  this.timeout(60_000);
  let nats: NatsServer;
  let link: ClusterLink;

  before(async () => {
    nats = await NatsServer.alone('stall');
    const options: LinkOptions = { servers: [nats.url], node: 'stalled-node', replicas: 1, timeoutMs: 10_000, log: quiet };
    link = await openLink(options);
    await ensureStream(link, options, performance.now() + 30_000);
  });

  after(async () => {
    await link?.nc.close().catch(() => undefined);
    await nats?.remove();
  });

  it('is refused (was not stored) and the node fences before it, although the fence timer has not run yet', async () => {
    const claims = new SessionClaims('stalled-node', noState);
    const order: string[] = [];
    const listener: Partial<SessionOwnershipListener> = {
      fenced: () => order.push('fenced'),
      unfenced: () => undefined,
      nodesHoldingState: () => [],
    };
    claims.listen(listener as SessionOwnershipListener);
    const writer = new TurnWriter(link, 'stalled-node', 10_000);
    const liveness = new NodeLiveness(link, 'stalled-node', LEASE_MS, 1, claims, quiet, async () => true);
    // As the plugin wires them (plugins/cluster-nats/index.ts).
    claims.checkLease = () => { liveness.leaseHeld(); };
    writer.leaseHeld = () => liveness.leaseHeld();
    try {
      await liveness.start();
      // Every renewal that succeeded so far was sent before this moment.
      const renewedBefore = performance.now();
      assert.equal(claims.fenced, false);

      // The stall: nothing else runs until half a lease has passed since then.
      while (performance.now() - renewedBefore <= LEASE_MS / 2) { /* a GC pause, a busy callback */ }
      const entry: OperationEntry = { op: 'state.put', key: 'stall/probe', value: 'made after the stall' } as OperationEntry;
      const write = writer.forward(entry).then(() => 'stored', (error: unknown) => {
        order.push('refused');
        return error;
      });

      const outcome = await write;
      assert.ok(outcome instanceof EngineError, `the write was ${String(outcome)}`);
      assert.equal(outcome.id, 'CLUSTER_UNAVAILABLE');
      assert.match(outcome.message, /lease/);
      assert.deepEqual(order, ['fenced', 'refused'], 'the node fenced before the turn was refused');
      const info = await link.jsm.streams.info(STREAM);
      assert.equal(info.state.messages, 0, 'the stream holds nothing of the turn');
    } finally {
      liveness.stop();
    }
  });
});
