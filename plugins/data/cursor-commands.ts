/**
 * cursor.open / cursor.fetch / cursor.close: a positioned read kept open between requests.
 *
 * A cursor reads records, so opening it and every fetch need `record.find` on its table as well
 * as their own command (`cursor.open`, `cursor.fetch`), checked with the caller's current roles:
 * a revoked role or a new `record.*` deny stops a cursor at its next fetch. Closing one's own
 * cursor needs no grant (it only releases it). The cursor must be the caller's (same authToken
 * session, or same account without a session): anything else is CURSOR_NOT_FOUND, answered
 * before any role check so ids cannot be probed.
 *
 * Long walks yield to the event loop (the broker shares it), as record.find does: with a filter,
 * the skip of cursor.open and a fetch's skip, records and `more` may visit far more entries than
 * they return, so they run in slices (ReadSlices), VISITS_PER_TURN entries at a time; so does a
 * skip over more than VISITS_PER_TURN records. Other steps visit no more entries than they return
 * and run in one call. One operation per cursor runs at a time (CursorRegistry.exclusive).
 */
import type {
  CursorCloseParams, CursorFetchParams, CursorFetchResult, CursorOpenParams, CursorOpenResult, EncodedRecord,
} from '../../lib/data/command-types';
import type { CommandContext, Resource } from '../../kernel/bus/command';
import type { ReadSlices, StoredValues } from '../../kernel/storage/storage-port';
import { readAll } from '../../kernel/storage/stored-values';
import { ownerOf, tableCall, tableResource, type DataContext } from './data-context';
import type { CursorEntry, CursorRegistry } from './cursor-registry';
import { RecordEncoder, resolveFormat } from './record-codec';
import { VISITS_PER_TURN, prepareRead, readInSlices } from './query-commands';
import { MAX_PAGE, formatSchema, inTable, readProperties } from './schemas';

const cursorIdSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;

type Direction = 'forward' | 'backward';

/** Runs a cursor operation in slices, letting the event loop run between them; the cursor must stay open. */
function inSlices<T>(cursors: CursorRegistry, entry: CursorEntry, operation: ReadSlices<T>): Promise<T> {
  return readInSlices(operation, () => cursors.stillOpen(entry));
}

/** Whether skipping `count` records may walk far more than VISITS_PER_TURN entries. */
function longSkip(filtered: boolean, count: number): boolean {
  return count > VISITS_PER_TURN || (filtered && count > 0);
}

function skipInSlices(cursors: CursorRegistry, entry: CursorEntry, count: number, direction: Direction): Promise<number> {
  return inSlices(cursors, entry, entry.cursor.skip(count, direction));
}

/** A fetch's records and `more`, in slices (a filtered cursor). */
async function fetchInSlices(cursors: CursorRegistry, entry: CursorEntry, count: number, direction: Direction): Promise<{ stored: StoredValues[]; more: boolean }> {
  const stored = await inSlices(cursors, entry, entry.cursor.fetch(count, direction));
  const more = await inSlices(cursors, entry, entry.cursor.hasMore(direction));
  return { stored, more };
}

export function registerCursorCommands(data: DataContext): void {
  const { bus } = data.engine;
  const cursorResource = (p: { cursorId: string }, ctx: CommandContext): Resource => data.cursors.resourceOf(ownerOf(ctx), p.cursorId);

  bus.register<CursorOpenParams, CursorOpenResult>({
    name: 'cursor.open',
    reads: true,
    summary: 'Open a cursor over a read like record.find (without limit); fetch pages with cursor.fetch.',
    params: inTable(readProperties),
    resource: tableResource,
    handler: (p, ctx) => {
      data.engine.authorize(ctx, 'record.find', tableResource(p));
      const { storage, database, table, transactionId } = tableCall(data, ctx, p);
      const read = prepareRead(storage, table, p);
      const cursor = storage.openCursor(database, table.name, { ...read.options, ...(transactionId ? { transactionId } : {}) });
      const newCursor = {
        owner: ownerOf(ctx),
        database,
        table,
        index: read.options.index,
        cursor,
        select: p.select,
        format: read.format,
        fields: read.encoder.fields,
        encoder: read.encoder,
        filtered: read.options.filter !== undefined,
      };
      const skip = p.skip ?? 0;
      if (!longSkip(newCursor.filtered, skip)) {
        try {
          if (skip) readAll(cursor.skip(skip, 'forward'));
        } catch (error) {
          cursor.close();
          throw error;
        }
        const entry = data.cursors.add(newCursor);
        return { cursorId: entry.id, fields: entry.fields };
      }
      // Registered before the skip, so that closing the table, the session or everything closes it meanwhile.
      const entry = data.cursors.add(newCursor);
      return data.cursors.exclusive(entry, async () => {
        try {
          await skipInSlices(data.cursors, entry, skip, 'forward');
        } catch (error) {
          data.cursors.discard(entry);
          storage.getTable(database, table.name); // deleted meanwhile: TABLE_NOT_FOUND, not the closed cursor's CURSOR_NOT_FOUND
          throw error;
        }
        return { cursorId: entry.id, fields: entry.fields };
      });
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
      return data.cursors.exclusive(entry, () => {
        // Checked when the fetch runs (it may have waited behind another on this cursor).
        data.engine.authorize(ctx, 'record.find', { kind: 'table', database: entry.database, table: entry.table.name });
        const { cursor } = entry;
        const direction = p.direction ?? 'forward';
        const encoder = p.format ? RecordEncoder.for(entry.table, entry.select, resolveFormat(p.format, entry.format)) : entry.encoder;
        const page = (stored: StoredValues[], more: boolean): CursorFetchResult => {
          const records = new Array<EncodedRecord>(stored.length);
          for (let i = 0; i < stored.length; i++) records[i] = encoder.encodeStored(stored[i].id, stored[i].values);
          return { fields: encoder.fields, records, more, idDeclared: entry.table.idDeclared };
        };
        if (p.from === 'start' || p.from === 'end') cursor.moveTo(p.from);
        const skip = p.skip ?? 0;
        if (!entry.filtered && !longSkip(false, skip)) {
          // No filter: a fetch visits the records it returns, and `more` one more (the hot path).
          if (skip) readAll(cursor.skip(skip, direction));
          return page(readAll(cursor.fetch(p.count, direction)), readAll(cursor.hasMore(direction)));
        }
        return (async () => {
          // Here a filter or a skip over VISITS_PER_TURN: any skip may walk long.
          if (skip) await skipInSlices(data.cursors, entry, skip, direction);
          if (!entry.filtered) return page(readAll(cursor.fetch(p.count, direction)), readAll(cursor.hasMore(direction)));
          const { stored, more } = await fetchInSlices(data.cursors, entry, p.count, direction);
          return page(stored, more);
        })();
      });
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
