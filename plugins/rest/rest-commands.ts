/**
 * The data commands REST runs, with REST's value format. Each route runs one command; its
 * executor is resolved once (the data plugin, a dependency, has registered them) and kept.
 *
 * Metadata REST needs only to shape a request (which fields does the index have?) comes from the
 * data service without a second command or authorization. When shaping fails, `authorize` runs
 * before the error is answered, so a caller who may not read the table learns nothing of it.
 */
import type { CommandContext, Executor, Resource } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import type { IndexDefinition, TableDefinition } from '../../kernel/storage/types';
import type { DataService } from '../../kernel/data-service';
import { findIndex } from '../../lib/data/find-index';
import { REST_FORMAT } from '../../lib/values/wire-format';

export const FORMAT = REST_FORMAT;

export class RestCommands {
  private readonly executors = new Map<string, Executor>();
  private readonly data: DataService;

  constructor(private readonly engine: Engine) {
    this.data = engine.need('data');
  }

  run<R>(name: string, params: object, ctx: CommandContext): Promise<R> {
    let executor = this.executors.get(name);
    if (!executor) {
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

  /** The table's definition (internal read: see the top of this file). */
  table(database: string, table: string): TableDefinition {
    return this.data.tableDefinition(database, table);
  }

  /** An index of a table definition; throws INDEX_NOT_FOUND (the data plugin's lookup). */
  index(definition: TableDefinition, index: string): IndexDefinition {
    return findIndex(definition, index);
  }
}
