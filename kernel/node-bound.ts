/**
 * State that lives in one node's memory (transactions, cursors, action sessions and their
 * authTokens) is tied to the node that opened it (docs/cluster.md, "Node-bound state"). In a
 * cluster its ids carry that node's name, `<node>.<random>`, so another node that does not hold
 * one can tell the client where it lives (NODE_BOUND) instead of "not found". On a single node
 * (no `cluster_node_name`) ids are as they always were.
 */
import { EngineError } from './errors';

const NODE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export class NodeBoundIds {
  constructor(readonly node: string | null) {}

  /** `random` (base64url or a UUID: no `.`) with this node's name in front. */
  make(random: string): string {
    return this.node === null ? random : `${this.node}.${random}`;
  }

  /**
   * Throws NODE_BOUND when `id`, which this node does not hold, was made by another node; returns
   * otherwise (the caller answers its own "not found"). `what` names the state in the message.
   */
  checkElsewhere(id: unknown, what: string): void {
    if (this.node === null || typeof id !== 'string') return;
    const dot = id.indexOf('.');
    if (dot <= 0) return;
    const node = id.slice(0, dot);
    if (node !== this.node && NODE_NAME.test(node)) throw new EngineError('NODE_BOUND', { what, node, here: this.node });
  }
}
