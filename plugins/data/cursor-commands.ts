/**
 * cursor.open / cursor.fetch / cursor.close: a positioned read kept open between requests.
 *
 * A cursor reads records, so opening it and every fetch need `record.find` on its table as well
 * as their own command (`cursor.open`, `cursor.fetch`), checked with the caller's current roles:
 * a revoked role or a new `record.*` deny stops a cursor at its next fetch. Closing one's own
 * cursor needs no grant (it only releases it). The cursor must be the caller's (same authToken
 * session, or same account without a session): anything else is CURSOR_NOT_FOUND, answered
 * before any role check so ids cannot be probed.
 */
import type {
  CursorCloseParams, CursorFetchParams, CursorFetchResult, CursorOpenParams, CursorOpenResult, EncodedRecord,
} from './command-types';
import type { CommandContext, Resource } from '../../kernel/bus/command';
import { ownerOf, tableCall, tableResource, type DataContext } from './data-context';
import { RecordEncoder, resolveFormat } from './record-codec';
import { prepareRead } from './query-commands';
import { MAX_PAGE, formatSchema, inTable, readProperties } from './schemas';

const cursorIdSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;

export function registerCursorCommands(data: DataContext): void {
  const { bus } = data.engine;
  const cursorResource = (p: { cursorId: string }, ctx: CommandContext): Resource => data.cursors.resourceOf(ownerOf(ctx), p.cursorId);

  bus.register<CursorOpenParams, CursorOpenResult>({
    name: 'cursor.open',
    summary: 'Open a cursor over a read like record.find (without limit); fetch pages with cursor.fetch.',
    params: inTable(readProperties),
    resource: tableResource,
    handler: (p, ctx) => {
      data.engine.authorize(ctx, 'record.find', tableResource(p));
      const { storage, database, table, transactionId } = tableCall(data, ctx, p);
      const read = prepareRead(table, p);
      const cursor = storage.openCursor(database, table.name, { ...read.options, ...(transactionId ? { transactionId } : {}) });
      try {
        if (p.skip) cursor.skip(p.skip, 'forward');
      } catch (error) {
        cursor.close();
        throw error;
      }
      const entry = data.cursors.add({
        owner: ownerOf(ctx),
        database,
        table,
        index: read.options.index,
        cursor,
        select: p.select,
        format: read.format,
        fields: read.encoder.fields,
        encoder: read.encoder,
      });
      return { cursorId: entry.id, fields: entry.fields };
    },
  });

  bus.register<CursorFetchParams, CursorFetchResult>({
    name: 'cursor.fetch',
    summary: 'The next `count` records of the caller\'s cursor (forward or backward), after skipping `skip`.',
    params: {
      type: 'object',
      required: ['cursorId', 'count'],
      properties: {
        cursorId: cursorIdSchema,
        count: { type: 'integer', minimum: 1, maximum: MAX_PAGE },
        direction: { enum: ['forward', 'backward'] },
        from: { enum: ['current', 'start', 'end'] },
        skip: { type: 'integer', minimum: 0 },
        format: formatSchema,
      },
    },
    resource: cursorResource,
    handler: (p, ctx) => {
      const entry = data.cursors.use(ownerOf(ctx), p.cursorId);
      data.engine.authorize(ctx, 'record.find', { kind: 'table', database: entry.database, table: entry.table.name });
      const direction = p.direction ?? 'forward';
      const encoder = p.format ? RecordEncoder.for(entry.table, entry.select, resolveFormat(p.format, entry.format)) : entry.encoder;
      if (p.from === 'start' || p.from === 'end') entry.cursor.moveTo(p.from);
      if (p.skip) entry.cursor.skip(p.skip, direction);
      const stored = entry.cursor.fetch(p.count, direction);
      const records = new Array<EncodedRecord>(stored.length);
      for (let i = 0; i < stored.length; i++) records[i] = encoder.encode(stored[i].id, stored[i].row);
      return { fields: encoder.fields, records, more: entry.cursor.hasMore(direction), idDeclared: entry.table.idDeclared };
    },
  });

  bus.register<CursorCloseParams, Record<string, never>>({
    name: 'cursor.close',
    summary: 'Close the caller\'s cursor.',
    params: { type: 'object', required: ['cursorId'], properties: { cursorId: cursorIdSchema } },
    // Only the owner finds the cursor; releasing it needs no grant (like transaction.rollback).
    access: 'authenticated',
    handler: (p, ctx) => {
      data.cursors.close(ownerOf(ctx), p.cursorId);
      return {};
    },
  });
}
