/**
 * The data commands REST runs, with REST's value format. Executors are resolved on first use
 * (the storage plugin may register its commands after this plugin), then kept.
 *
 * Metadata REST needs only to shape a request or a response (is `id` declared? which fields does
 * the index have?) is read with the internal principal, after the caller was authorized for the
 * command the request is really about, so it reveals nothing the caller may not read.
 */
import type { CommandContext, Executor, Resource } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import { REST_FORMAT } from '../data/values/wire-format';
import type {
  TableDescribeParams, TableDescribeResult,
} from '../data/command-types';
import type { IndexDefinition, TableDefinition } from '../../kernel/storage/types';

export const FORMAT = REST_FORMAT;

const INTERNAL: CommandContext = Object.freeze({ principal: SYSTEM_PRINCIPAL, origin: 'rest' });

export class RestCommands {
  private readonly executors = new Map<string, Executor>();

  constructor(private readonly engine: Engine) {}

  run<R>(name: string, params: object, ctx: CommandContext): Promise<R> {
    let executor = this.executors.get(name);
    if (!executor) {
      if (!this.engine.bus.has(name)) {
        return Promise.reject(new EngineError('NOT_AVAILABLE', { feature: `REST (${name})`, reason: 'no storage plugin registers the data commands' }));
      }
      executor = this.engine.bus.resolve(name);
      this.executors.set(name, executor);
    }
    return executor(params, ctx) as Promise<R>;
  }

  /** Throws NOT_AUTHORIZED unless `ctx` may run `command` on the table. */
  authorize(ctx: CommandContext, command: string, database: string, table: string): void {
    const resource: Resource = { kind: 'table', database: database.toLowerCase(), table: table.toLowerCase() };
    this.engine.authorize(ctx, command, resource);
  }

  /** The table's definition (internal read: call after the caller was authorized on the table). */
  async table(database: string, table: string): Promise<TableDefinition> {
    const params: TableDescribeParams = { database, tables: [table] };
    const result = await this.run<TableDescribeResult>('table.describe', params, INTERNAL);
    return result.tables[0];
  }

  /** An index of a table definition; throws INDEX_NOT_FOUND. */
  index(definition: TableDefinition, index: string): IndexDefinition {
    const name = index.toLowerCase();
    const found = definition.indexes.find((candidate) => candidate.name === name);
    if (!found) throw new EngineError('INDEX_NOT_FOUND', { index, table: definition.name });
    return found;
  }
}
