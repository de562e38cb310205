/**
 * The command bus: register (name, params schema, resource, handler), resolve, execute.
 * execute = validate → authorize → handler. Hot paths call `resolve` once and keep the executor.
 */
import { EngineError } from '../errors';
import { ajv, paramsError, type ValidateFunction } from '../schema-validator';
import type { CommandContext, CommandDefinition, Executor, Resource } from './command';

export type Authorizer = (ctx: CommandContext, command: string, resource: Resource) => void;

interface RegisteredCommand {
  definition: CommandDefinition;
  validate: ValidateFunction;
  executor: Executor;
}

const SYSTEM_RESOURCE: Resource = Object.freeze({ kind: 'system' });

export class CommandBus {
  private readonly commands = new Map<string, RegisteredCommand>();

  constructor(private readonly authorize: Authorizer) {}

  register<P, R>(definition: CommandDefinition<P, R>): void {
    if (!/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/.test(definition.name)) {
      throw new Error(`command name "${definition.name}" must look like noun.verb`);
    }
    if (this.commands.has(definition.name)) {
      throw new Error(`command "${definition.name}" is registered twice`);
    }
    const validate = ajv.compile(definition.params);
    const authorize = this.authorize;
    const { name, handler } = definition;
    const resourceOf = definition.resource;
    const checkRole = definition.access !== 'authenticated';
    const executor: Executor = async (params, ctx) => {
      if (!validate(params)) throw paramsError(validate.errors);
      if (checkRole) authorize(ctx, name, resourceOf ? resourceOf(params as P, ctx) : SYSTEM_RESOURCE);
      return handler(params as P, ctx);
    };
    this.commands.set(definition.name, { definition: definition as CommandDefinition, validate, executor });
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
