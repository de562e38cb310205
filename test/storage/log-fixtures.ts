/** What the message-log tests share: a message to append and a fresh data folder. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MessageInput } from '../../kernel/storage/storage-port';

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
