/**
 * The SQL commands on the bus: `sql.query` (one SELECT: getRecordsUsingSql), `sql.run` (a list
 * of statements in one transaction: runSqlStatements), `sql.cursorFetch` and `sql.cursorClose`
 * (SQL result cursors). Any signed-in caller may run them: every table a statement reads or
 * writes is authorized on its own by the kernel's authorize() (table-requests.ts), the catalog
 * tables list only the tables the caller may read.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { TransactionResult } from '../../lib/data/command-types';
import { ISO_FORMAT, type ValueFormat } from '../../lib/values/wire-format';
import type { SqlJob, StatementOutcome } from './sql-protocol';
import { encodeRows, recordsOf, resultFields } from './result-rows';
import { SqlCursors } from './sql-cursors';
import type { SqlWorkerPool } from './worker-pool';

const NAME = { type: 'string', minLength: 1, maxLength: 64 } as const;
const FORMAT = { type: 'object' } as const;

interface Common { database: string; owner: string; format?: Partial<ValueFormat> }
interface QueryParams extends Common {
  sql: string;
  params?: unknown[];
  maxRecords?: number;
  skipRecords?: number;
  returnCursor?: boolean;
  countTotal?: boolean;
  /** Answer the rows as the JSON text of a `data` array of this shape (`json`, `count`) rather than as `records`. */
  json?: 'arrays' | 'objects';
}
interface RunParams extends Common {
  statements: string[];
  /** Each statement's parameter values, by its place in `statements`. */
  params?: unknown[][];
  onError?: 'continue' | 'stop';
  atEnd?: 'commit' | 'rollback' | 'rollbackOnError';
  maxRecords?: number;
}

function ownerOf(ctx: CommandContext): string {
  return ctx.sessionId !== undefined ? `session:${ctx.sessionId}` : `account:${ctx.principal.account}`;
}

function formatOf(format: Partial<ValueFormat> | undefined): ValueFormat {
  return { ...ISO_FORMAT, ...(format ?? {}) };
}

function checkLength(engine: Engine, sql: string, param: string): void {
  const limit = engine.settings.sql_max_statement_length;
  if (sql.length > limit) throw new EngineError('INVALID_PARAMETER', { param, reason: `a statement is at most ${limit} characters` });
}

function failure(outcome: StatementOutcome): EngineError | undefined {
  return outcome.error ? new EngineError(outcome.error.id as never, outcome.error.details) : undefined;
}

export function registerSqlCommands(engine: Engine, pool: SqlWorkerPool): SqlCursors {
  const cursors = new SqlCursors(engine.clock, () => engine.settings.cursor_idle_timeout_seconds * 1000, () => engine.settings.sql_max_cursors_per_session, engine.nodeIds);
  engine.apiSessions.onEnd((session) => cursors.closeOwner(`session:${session.id}`));
  const settings = engine.settings;

  engine.bus.register<QueryParams, unknown>({
    name: 'sql.query',
    reads: true,
    summary: 'Run one SELECT over the engine tables (getRecordsUsingSql).',
    access: 'authenticated',
    params: {
      type: 'object',
      required: ['database', 'owner', 'sql'],
      properties: {
        database: NAME, owner: NAME, sql: { type: 'string', minLength: 1 }, params: { type: 'array' },
        maxRecords: { type: 'integer', minimum: 1 }, skipRecords: { type: 'integer', minimum: 0 },
        returnCursor: { type: 'boolean' }, countTotal: { type: 'boolean' }, format: FORMAT, json: { enum: ['arrays', 'objects'] },
      },
    },
    async handler(p, ctx) {
      checkLength(engine, p.sql, 'sql');
      if (p.returnCursor) cursors.checkRoom(ownerOf(ctx));
      const cap = settings.sql_max_records;
      const requested = Math.min(p.maxRecords ?? cap, cap);
      const job: Omit<SqlJob, 'id'> = {
        kind: 'query', database: p.database.toLowerCase(), owner: p.owner.toLowerCase(), statements: [p.sql], params: p.params ?? [],
        maxRows: p.returnCursor ? cap : requested, skipRows: p.skipRecords ?? 0, countAll: p.countTotal === true,
        timeoutMs: settings.sql_timeout_ms, onError: 'stop',
        ...(p.returnCursor ? {} : { format: formatOf(p.format), ...(p.json !== undefined ? { json: p.json } : {}) }),
      };
      const [outcome] = await pool.run(job, { ctx, database: job.database });
      const error = failure(outcome);
      if (error) throw error;
      const fields = resultFields(outcome.columns ?? []);
      const rows = outcome.rows ?? [];
      if (p.returnCursor) {
        const cursor = cursors.add(ownerOf(ctx), fields, rows);
        return { cursorId: cursor.id, fields };
      }
      const counts = { more: outcome.more === true, requested, ...(outcome.total !== undefined ? { total: outcome.total } : {}) };
      if (outcome.json !== undefined) return { fields, json: outcome.json, count: outcome.count ?? 0, ...counts };
      return { fields, records: outcome.encoded ? recordsOf(fields, outcome.encoded) : encodeRows(fields, rows, formatOf(p.format)), ...counts };
    },
  });

  engine.bus.register<RunParams, unknown>({
    name: 'sql.run',
    summary: 'Run SQL statements (DDL and DML) in one transaction (runSqlStatements).',
    access: 'authenticated',
    params: {
      type: 'object',
      required: ['database', 'owner', 'statements'],
      properties: {
        database: NAME, owner: NAME, statements: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        params: { type: 'array', items: { type: 'array' } },
        onError: { enum: ['continue', 'stop'] }, atEnd: { enum: ['commit', 'rollback', 'rollbackOnError'] },
        maxRecords: { type: 'integer', minimum: 1 }, format: FORMAT,
      },
    },
    async handler(p, ctx) {
      if (p.statements.length > settings.sql_max_statements) {
        throw new EngineError('INVALID_PARAMETER', { param: 'sqlStatements', reason: `at most ${settings.sql_max_statements} statements per call` });
      }
      p.statements.forEach((sql, i) => checkLength(engine, sql, `sqlStatements[${i}]`));
      if (p.params && p.params.length > p.statements.length) {
        throw new EngineError('INVALID_PARAMETER', { param: 'sqlParams', reason: `${p.params.length} parameter lists for ${p.statements.length} statements` });
      }
      const database = p.database.toLowerCase();
      const { transactionId } = await engine.bus.execute<TransactionResult>('transaction.begin', {}, ctx);
      let outcomes: StatementOutcome[];
      try {
        outcomes = await pool.run({
          kind: 'statements', database, owner: p.owner.toLowerCase(), statements: p.statements, params: [], ...(p.params ? { statementParams: p.params } : {}),
          maxRows: Math.min(p.maxRecords ?? settings.sql_max_records, settings.sql_max_records), skipRows: 0, countAll: false,
          timeoutMs: settings.sql_timeout_ms, onError: p.onError ?? 'continue', format: formatOf(p.format),
        }, { ctx, database, transactionId });
      } catch (error) {
        await rollback(engine, transactionId, ctx);
        throw error;
      }
      const failed = outcomes.some((outcome) => outcome.error);
      const atEnd = p.atEnd ?? 'rollbackOnError';
      let committed = false;
      let commitError: EngineError | undefined;
      if (atEnd === 'commit' || (atEnd === 'rollbackOnError' && !failed)) {
        try {
          await engine.bus.execute('transaction.commit', { transactionId }, ctx);
          committed = true;
        } catch (error) {
          commitError = error as EngineError;
        }
      } else {
        await rollback(engine, transactionId, ctx);
      }
      if (commitError) throw commitError;
      const format = formatOf(p.format);
      return {
        committed,
        statements: outcomes.map((outcome) => {
          const fields = outcome.columns ? resultFields(outcome.columns) : undefined;
          return {
            sql: outcome.sql,
            errorCode: outcome.error ? new EngineError(outcome.error.id as never, outcome.error.details).code : 0,
            errorMessage: outcome.error ? new EngineError(outcome.error.id as never, outcome.error.details).message : '',
            affectedRows: outcome.affectedRows,
            ...(fields ? { fields, records: outcome.encoded ? recordsOf(fields, outcome.encoded) : encodeRows(fields, outcome.rows ?? [], format), more: outcome.more === true } : {}),
          };
        }),
      };
    },
  });

  engine.bus.register<{ cursorId: string; count: number; direction?: 'forward' | 'backward'; from?: 'current' | 'start' | 'end'; skip?: number; format?: Partial<ValueFormat> }, unknown>({
    name: 'sql.cursorFetch',
    summary: 'Page a SQL result cursor.',
    access: 'authenticated',
    params: {
      type: 'object',
      required: ['cursorId', 'count'],
      properties: {
        cursorId: { type: 'string' }, count: { type: 'integer', minimum: 1 }, direction: { enum: ['forward', 'backward'] },
        from: { enum: ['current', 'start', 'end'] }, skip: { type: 'integer', minimum: 0 }, format: FORMAT,
      },
    },
    handler(p, ctx) {
      const cursor = cursors.use(ownerOf(ctx), p.cursorId);
      if (p.from === 'start') cursor.position = 0;
      if (p.from === 'end') cursor.position = cursor.rows.length;
      const skip = p.skip ?? 0;
      let rows;
      if (p.direction === 'backward') {
        const end = Math.max(0, cursor.position - skip);
        const start = Math.max(0, end - p.count);
        rows = cursor.rows.slice(start, end).reverse();
        cursor.position = start;
      } else {
        const start = Math.min(cursor.rows.length, cursor.position + skip);
        rows = cursor.rows.slice(start, start + p.count);
        cursor.position = start + rows.length;
      }
      const more = p.direction === 'backward' ? cursor.position > 0 : cursor.position < cursor.rows.length;
      return { fields: cursor.fields, records: encodeRows(cursor.fields, rows, formatOf(p.format)), more };
    },
  });

  engine.bus.register<{ cursorId: string }, unknown>({
    name: 'sql.cursorClose',
    summary: 'Close a SQL result cursor.',
    access: 'authenticated',
    params: { type: 'object', required: ['cursorId'], properties: { cursorId: { type: 'string' } } },
    handler(p, ctx) {
      cursors.close(ownerOf(ctx), p.cursorId);
      return {};
    },
  });
  return cursors;
}

async function rollback(engine: Engine, transactionId: string, ctx: CommandContext): Promise<void> {
  try {
    await engine.bus.execute('transaction.rollback', { transactionId }, ctx);
  } catch {
    // already ended (rolled back by a failed commit, or expired)
  }
}
