/**
 * Client sessions, keyed by client name: an MQTT client identifier and an MQ API `clientName` are
 * the same thing (CONTRACT). Persisted in the internal store `client_sessions` with their
 * subscriptions and queue positions; the live connection (if any) is attached in memory.
 */
import { EngineError } from '../errors';
import type { InternalStore } from '../storage/storage-port';

export interface SubscriptionRecord {
  topicFilter: string;
  qos: number;
  subscriptionIdentifier?: number;
  noLocal?: boolean;
  retainAsPublished?: boolean;
  retainHandling?: 0 | 1 | 2;
  includeExpiredMessages?: boolean;
  binaryFormat?: 'hex' | 'base64' | 'byteArray';
  userProperties?: Array<{ key: string; value: string }>;
}

export interface ClientSessionRecord {
  clientName: string;
  /** Account that created the session. */
  owner: string;
  kind: 'mqtt' | 'mqApi';
  subscriptions: SubscriptionRecord[];
  /** Next message ID to deliver, per topic. */
  positions: Record<string, number>;
  createdAt: string;
  updatedAt: string;
}

/** What a live connection must do when another one takes its client name. */
export interface ClientConnection {
  /** The account the connection logged in as. */
  readonly account?: string;
  takeOver(): void;
  /** Closes the connection on an operator's request (MQTT 5: DISCONNECT 0x98); the session stays as its expiry says. */
  disconnect(): void;
}

export class ClientSessions {
  private readonly records = new Map<string, ClientSessionRecord>();
  private readonly connections = new Map<string, ClientConnection>();
  private store?: InternalStore<ClientSessionRecord>;

  open(store: InternalStore<ClientSessionRecord> | undefined): void {
    this.store = store;
    if (store) for (const [name, record] of store.entries()) this.records.set(name, record);
  }

  get(clientName: string): ClientSessionRecord | undefined {
    return this.records.get(clientName);
  }

  require(clientName: string): ClientSessionRecord {
    const record = this.records.get(clientName);
    if (!record) throw new EngineError('MQ_SESSION_NOT_FOUND', { clientName });
    return record;
  }

  list(): ClientSessionRecord[] {
    return [...this.records.values()];
  }

  async create(clientName: string, owner: string, kind: ClientSessionRecord['kind']): Promise<ClientSessionRecord> {
    const now = new Date().toISOString();
    const record: ClientSessionRecord = { clientName, owner, kind, subscriptions: [], positions: {}, createdAt: now, updatedAt: now };
    await this.save(record);
    return record;
  }

  async save(record: ClientSessionRecord): Promise<void> {
    record.updatedAt = new Date().toISOString();
    await this.store?.put(record.clientName, record);
    this.records.set(record.clientName, record);
  }

  async delete(clientName: string): Promise<boolean> {
    this.connections.get(clientName)?.takeOver();
    this.connections.delete(clientName);
    const existed = this.records.delete(clientName);
    await this.store?.remove(clientName);
    return existed;
  }

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

  detach(clientName: string, connection: ClientConnection): void {
    if (this.connections.get(clientName) === connection) this.connections.delete(clientName);
  }

  isConnected(clientName: string): boolean {
    return this.connections.has(clientName);
  }
}
