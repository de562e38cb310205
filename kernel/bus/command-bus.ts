/**
 * The command bus: register (name, params schema, resource, handler), resolve, execute.
 * execute = validate → authorize → handler. Hot paths call `resolve` once and keep the executor.
 */
import { EngineError } from '../errors';
import { lazyValidator, paramsError } from '../schema-validator';
import type { CommandContext, CommandDefinition, Executor, Resource } from './command';

export type Authorizer = (ctx: CommandContext, command: string, resource: Resource) => void;

/**
 * A replica's catch-up, installed by a plugin that replicates writes (cluster-nats). A node answers
 * from its own copy, which may lag a write another node has already acknowledged: a table created
 * there a moment ago is "not found" here. With a catch-up installed, a command that fails with a
 * not-found error waits until this node has applied (durably) everything in the replicated log
 * at that moment, and runs once more.
 */
export interface ReplicaCatchUp {
  /** Applies up to the log's current tail; false when that cannot be done now (the first answer stands). */
  catchUp(): Promise<boolean>;
  /**
   * Present when reads must see the latest state: resolves once this node has applied what the log
   * held when it was called; rejects (CLUSTER_NOT_CURRENT) when that cannot be known in time.
   * Commands that read (CommandDefinition.reads) wait for it.
   */
  readLatest?(): Promise<void>;
}

/** Errors that may only mean "not applied here yet"; thrown before a command writes anything. */
const MAYBE_NOT_YET_APPLIED: ReadonlySet<string> = new Set([
  'DATABASE_NOT_FOUND', 'TABLE_NOT_FOUND', 'COLUMN_NOT_FOUND', 'INDEX_NOT_FOUND', 'RECORD_NOT_FOUND',
  'TOPIC_NOT_FOUND', 'ACCOUNT_NOT_FOUND', 'ROLE_NOT_FOUND',
]);

interface RegisteredCommand {
  definition: CommandDefinition;
  executor: Executor;
}

/** Runs a command; when it finds nothing the replica may not have applied yet, catches up and runs it once more. */
async function runCatchingUp(replica: ReplicaCatchUp, run: Executor, params: unknown, ctx: CommandContext): Promise<unknown> {
  try {
    return await run(params, ctx);
  } catch (error) {
    if (!(error instanceof EngineError) || !MAYBE_NOT_YET_APPLIED.has(error.id) || !await replica.catchUp()) throw error;
    return run(params, ctx);
  }
}

const SYSTEM_RESOURCE: Resource = Object.freeze({ kind: 'system' });

export class CommandBus {
  private readonly commands = new Map<string, RegisteredCommand>();
  private replica: ReplicaCatchUp | null = null;

  constructor(private readonly authorize: Authorizer) {}

  register<P, R>(definition: CommandDefinition<P, R>): void {
    if (!/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/.test(definition.name)) {
      throw new Error(`command name "${definition.name}" must look like noun.verb`);
    }
    if (this.commands.has(definition.name)) {
      throw new Error(`command "${definition.name}" is registered twice`);
    }
    const validate = lazyValidator(definition.params, `command "${definition.name}"`);
    const authorize = this.authorize;
    const { name, handler } = definition;
    const resourceOf = definition.resource;
    const checkRole = definition.access !== 'authenticated';
    const reads = definition.reads === true;
    // With a replica installed: authorized first, so a caller who may not read learns that, not 503.
    const run: Executor = async (params, ctx) => {
      if (checkRole) authorize(ctx, name, resourceOf ? resourceOf(params as P, ctx) : SYSTEM_RESOURCE);
      if (reads && this.replica?.readLatest !== undefined) await this.replica.readLatest();
      return handler(params as P, ctx);
    };
    const executor: Executor = async (params, ctx) => {
      if (!validate(params)) throw paramsError(validate.errors);
      if (this.replica !== null) return runCatchingUp(this.replica, run, params, ctx);
      if (checkRole) authorize(ctx, name, resourceOf ? resourceOf(params as P, ctx) : SYSTEM_RESOURCE);
      return handler(params as P, ctx);
    };
    this.commands.set(definition.name, { definition: definition as CommandDefinition, executor });
  }

  /** Installs a replica's catch-up (see ReplicaCatchUp); one per engine. */
  setReplicaCatchUp(replica: ReplicaCatchUp): void {
    if (this.replica !== null) throw new Error('a replica catch-up is installed already');
    this.replica = replica;
  }

  /** The replica's catch-up, when one is installed (the login guard shares it: kernel/auth/login-catch-up.ts). */
  get replicaCatchUp(): ReplicaCatchUp | null {
    return this.replica;
  }

  has(name: string): boolean {
    return this.commands.has(name);
  }

  /** The executor of a command, looked up once; throws UNKNOWN_COMMAND. */
  resolve<P = any, R = unknown>(name: string): Executor<P, R> {
    const command = this.commands.get(name);
    if (!command) throw new EngineError('UNKNOWN_COMMAND', { command: name });
    return command.executor as Executor<P, R>;
  }

  execute<R = unknown>(name: string, params: unknown, ctx: CommandContext): Promise<R> {
    const command = this.commands.get(name);
    if (!command) return Promise.reject(new EngineError('UNKNOWN_COMMAND', { command: name }));
    return command.executor(params, ctx) as Promise<R>;
  }

  /** Registered commands, for docs and OpenAPI generation. */
  list(): CommandDefinition[] {
    return [...this.commands.values()].map((c) => c.definition);
  }
}
