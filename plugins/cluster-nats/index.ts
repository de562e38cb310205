/**
 * plugins/cluster-nats: several engine nodes as one server, on NATS JetStream (docs/cluster.md).
 *
 * Listed after the storage plugin (config/cluster.json), it turns the store's writes into stream
 * records: every entry the store accepts is forwarded (StoragePort.operations.forward) to the
 * turn writer, which publishes one record per turn; every node, this one included, applies the
 * stream in order (stream-applier.ts). The ports the other plugins use stay the store's own, so
 * none of them changes; without this plugin the single-node build is unchanged.
 *
 * The plugin registers only once this node has applied the stream up to the tail it saw at start,
 * so the plugins after it (and their listeners) start on a store that has caught up.
 */
import { definePlugin } from '../../kernel/plugin';
import { openLink, ensureStream, type LinkOptions } from './stream';
import { TurnWriter } from './turn-writer';
import { StreamApplier } from './stream-applier';
import { streamCatchUp } from './catch-up';
import { SessionClaims } from './session-claims';
import { NodeLiveness } from './node-liveness';
import { NodeRequests } from './node-requests';

export default definePlugin({
  name: 'cluster-nats',
  description: 'several nodes as one server, on NATS JetStream',
  async register(engine) {
    const settings = engine.settings;
    const log = engine.log.child({ plugin: 'cluster-nats' });
    const node = settings.cluster_node_name;
    if (node === null) throw new Error('cluster-nats needs cluster_node_name: a name unique in the cluster');
    if (settings.cluster_nats_servers.length === 0) throw new Error('cluster-nats needs cluster_nats_servers: the URLs of the NATS servers');
    const storage = engine.need('storage');
    const timeoutMs = settings.cluster_request_timeout_ms;
    const options: LinkOptions = { servers: settings.cluster_nats_servers, node, replicas: settings.cluster_stream_replicas, timeoutMs, log };

    const link = await openLink(options);
    const closeLink = async (): Promise<void> => {
      link.writes.close();
      await link.nc.close().catch(() => undefined);
    };
    try {
      // Nothing is applied locally any more: every write goes through the stream.
      const writer = new TurnWriter(link, node, timeoutMs);
      storage.operations.forward(writer.forward);
      const info = await ensureStream(link, options, performance.now() + 3 * timeoutMs);
      const applier = new StreamApplier(link, storage.operations, writer, log, Math.min(1000, timeoutMs), timeoutMs);
      const { first_seq: first, last_seq: tail, messages } = info.state;
      if (applier.resumeSequence > tail + 1) {
        throw new Error(`this data folder has applied the stream up to record ${applier.resumeSequence - 1}, but the stream ends at ${tail}: it belongs to another cluster or the stream was recreated`);
      }
      if (messages > 0 && applier.resumeSequence < first) {
        throw new Error(`the stream no longer holds record ${applier.resumeSequence}, which this node needs (it starts at ${first}): seed this node's data folder from a peer's backup`);
      }
      // Who owns each client session, kept in stream order from here on (session-claims.ts).
      const claims = new SessionClaims(node, storage.messageLog.state);
      applier.reviewer = claims;
      engine.provide('sessionOwnership', claims);
      // Requests to the other nodes, for what they hold in memory (the admin actions across the cluster).
      const requests = new NodeRequests(link, node, timeoutMs, claims, log);
      engine.provide('nodeRequests', requests);
      // Listening from now on: a node that is starting is not taken for gone (nobody listening);
      // until the message core has registered its handlers, it answers a refusal (marked).
      requests.listen();
      log.info({ node, applied: applier.resumeSequence - 1, tail }, 'cluster: catching up with the stream');
      applier.run();
      await applier.reached(tail);
      log.info({ node, applied: applier.appliedSequence }, 'cluster: caught up');
      const catchUp = streamCatchUp(link, applier, timeoutMs, settings.cluster_read_consistency === 'latest');
      engine.bus.setReplicaCatchUp(catchUp);
      const liveness = new NodeLiveness(link, node, settings.cluster_node_lease_ms, settings.cluster_stream_replicas, claims, log, () => catchUp.catchUp());
      // Where work begins, the lease is checked first (docs/cluster.md, "A node paused"): a node
      // resumed after half a lease fences before it answers, delivers or writes anything.
      const leaseHeld = (): boolean => liveness.leaseHeld();
      claims.checkLease = leaseHeld;
      writer.leaseHeld = leaseHeld;
      applier.beforeRecord = leaseHeld;
      // Once the other plugins have registered (the message core listens to claims by then), and
      // before the listeners open: a node serves only once its first lease renewal is stored.
      engine.onStart(() => liveness.start(performance.now() + 3 * timeoutMs));
      engine.onClose(async () => {
        liveness.stop();
        requests.stop();
        // Writes made while the other plugins stop (sessions closing) still go through the stream.
        await writer.close();
        await applier.stop();
        await closeLink();
      });
    } catch (error) {
      await closeLink();
      throw error;
    }
  },
});
