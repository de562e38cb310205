/**
 * What a client is told when a request fails, the same for every protocol. An EngineError is
 * written for clients and shown as it is, except a 500 (a bug, or a failure of LMDB or the
 * operating system): that, and anything that is not an EngineError, becomes INTERNAL with a
 * generic message and a reference. Its own text and stack go to the log only, under that
 * reference, so an operator can find them and a client learns nothing about the inside.
 */
import { EngineError, newErrorReference } from './errors';

/** The logger method used (pino's, or anything shaped like it). */
export interface ErrorLog {
  error(details: object, message: string): void;
}

export function clientError(error: unknown, log: ErrorLog, context: object = {}): EngineError {
  if (error instanceof EngineError && error.status !== 500) return error;
  const cause = error instanceof EngineError && error.id === 'INTERNAL' && error.cause !== undefined ? error.cause : error;
  const reference = error instanceof EngineError && error.id === 'INTERNAL' && typeof error.details.reference === 'string'
    ? error.details.reference
    : newErrorReference();
  log.error({ ...context, err: cause, reference }, 'internal error');
  return new EngineError('INTERNAL', { reference });
}
