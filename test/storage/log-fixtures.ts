/** What the message-log tests share: a message to append, a fresh data folder, a store opened on one. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MessageInput, StoragePort } from '../../kernel/storage/storage-port';
import { openLmdbStorage } from '../../plugins/storage-lmdb/lmdb-storage';
import type { LmdbMessageLog } from '../../plugins/storage-lmdb/message-log';

/** A plain message whose payload names it (`m<i>`), with any field overridden. */
export function logMessage(i: number, overrides: Partial<MessageInput> = {}): MessageInput {
  return {
    createTs: '2024-01-01T00:00:00.000', payload: { type: 'string', value: `m${i}` }, qos: 1, retain: false,
    contentType: null, correlationData: null, responseTopic: null, expirySeconds: null, userProperties: null,
    payloadFormat: null, publisher: 'pub', ...overrides,
  };
}

export function tempLogDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `engine-${label}-`));
}

/** A store opened on a fresh data folder, and its message log. */
export interface OpenedLog {
  dir: string;
  store: StoragePort;
  log: LmdbMessageLog;
}

export function openLogStore(label: string): Promise<OpenedLog> {
  return openLogStoreIn(tempLogDir(label));
}

/** A store opened (again) on `dir`. */
export async function openLogStoreIn(dir: string): Promise<OpenedLog> {
  const store = await openLmdbStorage({ dataDir: dir, defaultDatabase: 'main' });
  return { dir, store, log: store.messageLog as LmdbMessageLog };
}

/** Closes the store and removes its folder. */
export async function closeLogStore({ dir, store }: OpenedLog): Promise<void> {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
