/**
 * Commands are the one vocabulary between protocols and capabilities: `noun.verb`, never a
 * protocol name. A capability registers each command as data; protocols only execute them.
 */
import type { Principal } from '../auth/principal';

/** What a command touches; roles grant commands on resource patterns (docs/roles.md). */
export type Resource =
  | { kind: 'system' }
  | { kind: 'database'; database: string }
  | { kind: 'table'; database: string; table: string }
  | { kind: 'topic'; topic: string }
  | { kind: 'client'; clientName: string }
  | { kind: 'account'; account: string }
  | { kind: 'role'; role: string };

export type Origin = 'rest' | 'actions' | 'mqtt' | 'internal' | (string & {});

export interface CommandContext {
  principal: Principal;
  origin: Origin;
  /** The id of the actions interface's authToken session, when there is one (never the token). */
  sessionId?: string;
  /** MQTT client identifier or MQ API client name, when there is one. */
  clientId?: string;
}

/** JSON schema of an object of params (compiled once by ajv at registration). */
export type ParamsSchema = Record<string, unknown> & { type: 'object' };

export interface CommandDefinition<P = any, R = unknown> {
  name: string;
  /** One-line description, shown in docs and errors. */
  summary?: string;
  params: ParamsSchema;
  /**
   * 'role' (default): authorize(principal, name, resource) decides.
   * 'authenticated': any authenticated principal may run it (own sessions, ping).
   */
  access?: 'role' | 'authenticated';
  /** The resource the command touches; default `{ kind: 'system' }`. */
  resource?: (params: P, ctx: CommandContext) => Resource;
  /**
   * Reads replicated state (records, tables, retained messages, accounts): in a cluster set to
   * `cluster_read_consistency: "latest"` it runs once this node has applied everything the log
   * held when the command arrived (docs/cluster.md, "Reading the latest").
   */
  reads?: boolean;
  handler: (params: P, ctx: CommandContext) => R | Promise<R>;
}

export type Executor<P = any, R = unknown> = (params: P, ctx: CommandContext) => Promise<R>;
