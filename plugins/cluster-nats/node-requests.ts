/**
 * Requests between the nodes over NATS request/reply (kernel/messaging/node-requests.ts;
 * docs/cluster.md, "Admin actions across the cluster"): each node answers on its own subject,
 * `engine.node.<name>` (node names are letters, digits, `-` and `_`: valid subject tokens), with
 * JSON bodies `{ kind, body }` and answers `{ value }` or `{ error: { id, details } }`. Nothing of
 * it is stored: it reads or acts on what a node holds in memory, and only while it runs.
 *
 * The other nodes are those holding a key in the lease bucket (`ENGINE_NODES`, node-liveness.ts)
 * and those owning client sessions (a dead node whose sessions no survivor adopted yet): a node
 * that cannot be reached is asked all the same, and marked as not answering.
 */
import { Kvm, type KV } from '@nats-io/kv';
import { errorForTravel, errorFromTravel, type NodeAnswer, type NodeRequestHandler, type NodeRequestPort, type TravellingError } from '../../kernel/messaging/node-requests';
import { EngineError, newErrorReference } from '../../kernel/errors';
import type { ClusterLink } from './stream';
import type { SessionClaims } from './session-claims';
import { NODES_BUCKET } from './node-liveness';

const SUBJECT_PREFIX = 'engine.node.';

type Log = { warn(o: object, m: string): void; error(o: object, m: string): void };

interface RequestBody {
  kind: string;
  body: unknown;
}

type Reply = { value: unknown } | { error: TravellingError };

export class NodeRequests implements NodeRequestPort {
  private readonly handlers = new Map<string, NodeRequestHandler>();
  private kv: KV | null = null;
  /** The nodes the lease bucket listed last (used while it cannot be read). */
  private leased: string[] = [];
  private subscription: { unsubscribe(): void } | null = null;

  constructor(
    private readonly link: ClusterLink,
    readonly node: string,
    readonly timeoutMs: number,
    private readonly claims: SessionClaims,
    private readonly log: Log,
  ) {}

  /** Starts answering the requests sent to this node. */
  listen(): void {
    const encoder = new TextEncoder();
    this.subscription = this.link.nc.subscribe(SUBJECT_PREFIX + this.node, {
      callback: (error: Error | null, message: { data: Uint8Array; respond(data: Uint8Array): boolean }) => {
        if (error !== null) return;
        void this.handle(message.data).then((reply) => {
          try {
            message.respond(encoder.encode(JSON.stringify(reply)));
          } catch (failed) {
            // Too large for the servers' max_payload (a describe of very many sessions), or the
            // connection closing: the asking node hears why instead of waiting out its timeout.
            this.log.warn({ err: failed }, 'cluster: an answer to another node could not be sent');
            const refusal: Reply = { error: { id: 'NOT_AVAILABLE', details: { feature: 'this node\'s answer', reason: String((failed as Error)?.message ?? failed) } } };
            try {
              message.respond(encoder.encode(JSON.stringify(refusal)));
            } catch {
              // Nothing more can be sent: the asking node's timeout marks this node.
            }
          }
        });
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  answer(kind: string, handler: NodeRequestHandler): void {
    this.handlers.set(kind, handler);
  }

  async otherNodes(): Promise<string[]> {
    const nodes = new Set<string>(await this.leasedNodes());
    for (const owner of this.claims.owningNodes()) nodes.add(owner);
    nodes.delete(this.node);
    return [...nodes].sort();
  }

  async ask<T>(node: string, kind: string, body: unknown): Promise<NodeAnswer<T>> {
    const payload = new TextEncoder().encode(JSON.stringify({ kind, body } satisfies RequestBody));
    let data: Uint8Array;
    try {
      data = (await this.link.nc.request(SUBJECT_PREFIX + node, payload, { timeout: this.timeoutMs })).data;
    } catch (error) {
      // A RequestError of the client library (not exported by its node transport's types).
      const noResponders = (error as { isNoResponders?: () => boolean } | null)?.isNoResponders?.() === true;
      const reason = noResponders
        ? 'nobody answers for that node (its process is gone or cut off from NATS)'
        : `no answer within ${this.timeoutMs} ms`;
      return { node, answered: false, reason, absent: noResponders };
    }
    const reply = JSON.parse(new TextDecoder().decode(data)) as Reply;
    if ('error' in reply) throw errorFromTravel(reply.error);
    return { node, answered: true, value: reply.value as T };
  }

  /** The nodes holding a lease now, as the bucket lists them (bounded by the request timeout). */
  private async leasedNodes(): Promise<string[]> {
    try {
      this.kv ??= await new Kvm(this.link.js).open(NODES_BUCKET);
      const kv = this.kv;
      const listed = (async () => {
        const keys: string[] = [];
        for await (const key of await kv.keys()) keys.push(key);
        return keys;
      })();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('the lease bucket did not answer in time')), this.timeoutMs); });
      try {
        this.leased = await Promise.race([listed, late]);
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      this.log.warn({ err: error }, 'cluster: the nodes holding a lease could not be read now; the last list is used');
    }
    return this.leased;
  }

  private async handle(data: Uint8Array): Promise<Reply> {
    try {
      const request = JSON.parse(new TextDecoder().decode(data)) as RequestBody;
      const handler = this.handlers.get(request.kind);
      // Starting (the message core has not registered yet), or a kind this build does not know.
      if (handler === undefined) throw new EngineError('NOT_AVAILABLE', { feature: `the node request ${String(request.kind)}`, reason: `node "${this.node}" does not answer it (yet)` });
      return { value: await handler(request.body) };
    } catch (error) {
      const travelling = errorForTravel(error, newErrorReference);
      if (travelling.id === 'INTERNAL') this.log.error({ err: error, reference: travelling.details.reference }, 'cluster: a request from another node failed');
      return { error: travelling };
    }
  }
}
