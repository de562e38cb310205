/**
 * The message core's side of session ownership in a cluster (kernel/messaging/session-ownership.ts,
 * docs/cluster.md "Sessions"): this node holds in memory only the sessions it owns (and those no
 * node ever claimed), so only the owner sends a session's messages, sweeps its expiry and sends
 * its will. A CONNECT for a client id another node owns claims it first; the claim, applied in
 * log order on every node, closes the former owner's connection (0x8E) and loads the session
 * here from its stored state, in-flight messages and QoS 2 receipts included.
 */
import type { SessionOwnershipListener, SessionOwnershipPort } from '../../kernel/messaging/session-ownership';
import type { MessageCore } from './message-core';

export class ClusterSessions implements SessionOwnershipListener {
  constructor(private readonly core: MessageCore, readonly ownership: SessionOwnershipPort) {
    ownership.listen(this);
  }

  /** Loaded at start: the sessions this node owns, and those no node claimed (written before ownership). */
  holds(clientId: string): boolean {
    const owner = this.ownership.ownerOf(clientId);
    return owner === undefined || owner === this.ownership.node;
  }

  /** A CONNECT's claim, when the client id is not this node's yet (undefined: nothing to wait for). */
  claim(clientId: string): Promise<boolean> | undefined {
    return this.ownership.owns(clientId) ? undefined : this.ownership.claim(clientId);
  }

  lost(clientId: string): void {
    const core = this.core;
    const session = core.sessions.get(clientId);
    if (session !== undefined) core.lifecycle.forget(session);
    // Its connection here goes (MQTT 5 hears 0x8E); the session was let go of first, so closing
    // the connection neither writes it nor sends its will again.
    core.engine.clientConnections.holder(clientId)?.takeOver();
  }

  gained(clientId: string): void {
    const core = this.core;
    const stale = core.sessions.get(clientId);
    if (stale !== undefined) core.lifecycle.forget(stale);
    const session = core.state.loadSession(clientId, core.engine.clock.now());
    if (session !== undefined) core.lifecycle.loaded([session]);
  }
}
