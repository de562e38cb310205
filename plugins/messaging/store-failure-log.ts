/**
 * How the message core logs a write the store did not take. A full storage (STORAGE_FULL) is
 * logged once by the store when it begins and once when writes resume (docs/operations.md "A full
 * disk and the log's size"): here it goes to debug, so a full disk does not log once per publish.
 * Anything else is an error, as before.
 */
import type { Logger } from 'pino';
import { isEngineError } from '../../kernel/errors';

export function logStoreFailure(log: Pick<Logger, 'error' | 'debug'>, error: unknown, details: object, message: string): void {
  if (isEngineError(error) && error.id === 'STORAGE_FULL') log.debug({ ...details, reason: error.message }, message);
  else log.error({ ...details, err: error }, message);
}
