/**
 * Requests from one node of a cluster to another, for live state held in that node's memory
 * (its connections, the statistics of the sessions it holds, its traffic figures): the admin
 * actions that act on the whole logical server from any node (docs/cluster.md, "Admin actions
 * across the cluster"). Provided as the service `nodeRequests` by a cluster plugin
 * (plugins/cluster-nats, over NATS request/reply); absent on a single node, where nothing is asked.
 *
 * Every request is bounded by `cluster_request_timeout_ms`: a node that does not answer in time
 * gives an answer marked `answered: false`, never a hang. A handler's EngineError travels back
 * as itself (its id and details), so the caller hears the owner's refusal as on one node.
 */
import { EngineError, ERRORS, type ErrorDetails, type ErrorId } from '../errors';

/** One node's answer to a request, or the mark of a node that did not answer. */
export type NodeAnswer<T = unknown> =
  | { node: string; answered: true; value: T }
  | {
    node: string;
    answered: false;
    /** Why: no answer within the timeout, or nobody listening for that node (its process is gone or cut off). */
    reason: string;
    /**
     * Nobody listens for that node at all (NATS has no subscriber for it: its process is gone, or
     * cut off from NATS), as opposed to a node that got the request and did not answer in time.
     */
    absent: boolean;
  };

/** Answers requests of one kind; what it returns (JSON data) goes back to the asking node, what it throws too. */
export type NodeRequestHandler = (body: unknown) => unknown;

export interface NodeRequestPort {
  /** This node's name. */
  readonly node: string;
  /** The bound of each request (`cluster_request_timeout_ms`). */
  readonly timeoutMs: number;
  /**
   * The other nodes of the cluster: those that hold a lease now, and those that own client
   * sessions (a node that died and whose sessions no survivor adopted yet), by name.
   */
  otherNodes(): Promise<string[]>;
  /**
   * Asks one node. Resolves with its answer, or marked `answered: false` when it did not answer in
   * time; rejects with the EngineError its handler threw.
   */
  ask<T>(node: string, kind: string, body: unknown): Promise<NodeAnswer<T>>;
  /** Registers the handler of requests of `kind` that other nodes send to this one. */
  answer(kind: string, handler: NodeRequestHandler): void;
}

/** An EngineError as it travels between nodes. */
export interface TravellingError {
  id: string;
  details: ErrorDetails;
}

/** An error a handler threw, ready to travel (anything not an EngineError becomes INTERNAL, its text kept from the answer). */
export function errorForTravel(error: unknown, reference: () => string): TravellingError {
  if (error instanceof EngineError) {
    const details: ErrorDetails = {};
    for (const [key, value] of Object.entries(error.details)) details[key] = typeof value === 'bigint' ? String(value) : value;
    return { id: error.id, details };
  }
  return { id: 'INTERNAL', details: { reference: reference() } };
}

/** The EngineError a node sent back, as the asking node raises it. */
export function errorFromTravel(travelled: TravellingError): EngineError {
  const id = (Object.hasOwn(ERRORS, travelled.id) ? travelled.id : 'INTERNAL') as ErrorId;
  return new EngineError(id, travelled.details ?? {});
}

declare module '../services' {
  interface EngineServices {
    /** Requests to the other nodes of a cluster (provided by a cluster plugin). */
    nodeRequests: NodeRequestPort;
  }
}
