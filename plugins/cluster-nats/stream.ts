/**
 * The link to the cluster's JetStream: one NATS connection (failing over between the servers
 * named by `cluster_nats_servers`, reconnecting for ever) and the engine's stream, created by the
 * first node that finds it missing. Every JetStream call has the deadline
 * `cluster_request_timeout_ms` (docs/cluster.md, "Failures").
 */
import { connect } from '@nats-io/transport-node';
import {
  jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type StreamInfo,
} from '@nats-io/jetstream';
import { StreamPublisher } from './stream-publisher';

/** The one stream every node writes its turns to and applies in order. */
export const STREAM = 'ENGINE';
export const WRITE_SUBJECT = 'engine.writes';
/** How long JetStream remembers a record's id to store a resent one once (Nats-Msg-Id). */
const DUPLICATE_WINDOW_NS = 120_000_000_000;
const READER_TIMEOUT_MS = 2000;

export type NatsConnection = Awaited<ReturnType<typeof connect>>;

export interface ClusterLink {
  nc: NatsConnection;
  js: JetStreamClient;
  /**
   * For creating the stream reader, with a short deadline: after a server died, a request sent
   * before the new leader is elected is never answered, and a short one is sent again sooner.
   */
  reader: JetStreamClient;
  jsm: JetStreamManager;
  /** Publishes the turn writer's records to the stream (stream-publisher.ts). */
  writes: StreamPublisher;
}

export interface LinkOptions {
  servers: string[];
  node: string;
  replicas: number;
  timeoutMs: number;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

export async function openLink(options: LinkOptions): Promise<ClusterLink> {
  const nc = await connect({
    servers: options.servers,
    name: `engine-${options.node}`,
    // In the order given: a node lists the server beside it first (docs/cluster.md).
    noRandomize: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: options.timeoutMs,
    // Otherwise every request builds an Error for its caller's stack (1% of a node's busy time in
    // the cluster bench); errors are reported by their message.
    noAsyncTraces: true,
  });
  const js = jetstream(nc, { timeout: options.timeoutMs });
  const reader = jetstream(nc, { timeout: Math.min(READER_TIMEOUT_MS, options.timeoutMs) });
  const jsm = await jetstreamManager(nc, { timeout: options.timeoutMs, checkAPI: false });
  return { nc, js, reader, jsm, writes: new StreamPublisher(nc, WRITE_SUBJECT) };
}

/**
 * The stream's info, creating the stream when absent. A JetStream cluster that has just started
 * elects its leaders for a few seconds: until then calls fail, and are tried again until
 * `deadline` (engine clock ms, performance.now()).
 */
export async function ensureStream(link: ClusterLink, options: LinkOptions, deadline: number): Promise<StreamInfo> {
  for (let attempt = 0; ; attempt++) {
    try {
      try {
        return await link.jsm.streams.info(STREAM);
      } catch (error) {
        if (!isStreamNotFound(error)) throw error;
      }
      options.log.info({ stream: STREAM, replicas: options.replicas }, 'cluster: creating the stream');
      return await link.jsm.streams.add({
        name: STREAM,
        subjects: [WRITE_SUBJECT],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        num_replicas: options.replicas,
        duplicate_window: DUPLICATE_WINDOW_NS,
      });
    } catch (error) {
      if (performance.now() >= deadline) throw error;
      if (attempt % 10 === 0) options.log.warn({ err: error }, 'cluster: the stream is not available yet; trying again');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function isStreamNotFound(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error);
  return /stream not found/i.test(text) || (error as { code?: unknown })?.code === 10059
    || (error as { api_error?: { err_code?: number } })?.api_error?.err_code === 10059;
}
