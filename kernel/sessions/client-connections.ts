/**
 * The live connections holding client names, one per name: an MQTT client identifier and an MQ
 * API `clientName` are the same thing (docs/actions.md, "subscribeToMq and MQ API sessions"). The sessions themselves (subscriptions, queue
 * positions, owner) are the message core's and are persisted by it (plugins/messaging); this
 * registry only lets whoever ends or takes a name reach the connection holding it.
 */

import type { Principal } from '../auth/principal';

/** What a live connection must do when another one takes its client name. */
export interface ClientConnection {
  /** Who logged in on it (undefined before the login completes). */
  readonly principal?: Principal;
  takeOver(): void;
  /** Closes the connection on an operator's request (MQTT 5: DISCONNECT 0x98); the session stays as its expiry says. */
  disconnect(): void;
  /**
   * This node is fenced (cut off from the cluster, docs/cluster.md "Self-fencing"): the connection
   * is closed without its will (MQTT 5: DISCONNECT 0x9C Use another server); its session was let
   * go of first, so closing writes nothing.
   */
  useAnotherServer(): void;
}

export class ClientConnections {
  private readonly connections = new Map<string, ClientConnection>();

  /** Attaches a live connection; the previous holder of the name is told to go [MQTT-3.1.4-2]. */
  attach(clientName: string, connection: ClientConnection): void {
    const previous = this.connections.get(clientName);
    this.connections.set(clientName, connection);
    if (previous && previous !== connection) previous.takeOver();
  }

  /** The live connection holding a client name, if any. */
  holder(clientName: string): ClientConnection | undefined {
    return this.connections.get(clientName);
  }

  /** Every live connection, as a list (closing one while walking it is safe). */
  all(): ClientConnection[] {
    return [...this.connections.values()];
  }

  detach(clientName: string, connection: ClientConnection): void {
    if (this.connections.get(clientName) === connection) this.connections.delete(clientName);
  }
}
