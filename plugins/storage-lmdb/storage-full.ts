/**
 * A full disk (or a full LMDB map) is an error, not a corruption (docs/operations.md "A full disk
 * and the log's size"). LMDB writes a commit's pages before its meta page, so a commit that cannot
 * write them leaves the file as the last durable commit left it: the write fails, nothing stored
 * is touched, reads go on, and the next commit after space returns succeeds.
 *
 * lmdb-js reports such a commit as `Error('Commit failed (see commitError for details)')` whose
 * `commitError` promise rejects with the cause (errno 28 ENOSPC, 122 EDQUOT, or MDB_MAP_FULL).
 * This turns it into STORAGE_FULL, logs the full state once when it begins and once when it ends,
 * and keeps lmdb-js's own leftover rejections of that failure from ending the process.
 */
import { statfsSync } from 'node:fs';
import { EngineError } from '../../kernel/errors';

/** errno values of a device or quota without space, and LMDB's MDB_MAP_FULL. */
const ENOSPC = 28;
const EDQUOT = 122;
const MDB_MAP_FULL = -30792;
/** lmdb-js reports some writes to a full device as EIO: read as "full" only while the device has no room. */
const EIO = 5;
const NO_ROOM_BYTES = 1 << 20;

export interface FullLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

interface LmdbCommitFailure extends Error {
  commitError: Promise<unknown>;
}

function isCommitFailure(error: unknown): error is LmdbCommitFailure {
  return error instanceof Error && typeof (error as Partial<LmdbCommitFailure>).commitError?.then === 'function';
}

/** Free bytes on the filesystem holding `dir` (Infinity when statfs cannot tell). */
function freeBytesOf(dir: string): number {
  try {
    const stats = statfsSync(dir);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return Infinity;
  }
}

/** The reason a cause says there is no space, or undefined when it says something else. */
export function noSpaceReason(cause: unknown, dataDir?: string): string | undefined {
  if (!(cause instanceof Error)) return undefined;
  const code: unknown = (cause as { code?: unknown }).code;
  if (code === ENOSPC || code === 'ENOSPC' || /No space left on device/i.test(cause.message)) return 'no space left on the device';
  if (code === EDQUOT || code === 'EDQUOT' || /quota exceeded/i.test(cause.message)) return 'the disk quota is exceeded';
  if (code === MDB_MAP_FULL || /MDB_MAP_FULL/.test(cause.message)) return 'the LMDB map is full';
  if ((code === EIO || code === 'EIO') && dataDir !== undefined && freeBytesOf(dataDir) < NO_ROOM_BYTES) return 'no space left on the device (an I/O error while it is full)';
  return undefined;
}

/** The cause lmdb-js gives a failed commit (its promise is settled in the same callback as the failure). */
async function commitCause(error: LmdbCommitFailure): Promise<unknown> {
  const nextTurn = new Promise<undefined>((resolve) => setImmediate(resolve, undefined));
  return Promise.race([error.commitError.then(() => undefined, (cause: unknown) => cause), nextTurn]);
}

export class StorageFullState {
  /** When the storage became full (undefined: it is not). */
  private fullSince: number | undefined;

  /** `dataDir`: where an EIO is checked against the free space (see noSpaceReason). */
  constructor(private readonly log: FullLog | undefined, private readonly dataDir?: string) {}

  get isFull(): boolean { return this.fullSince !== undefined; }

  /**
   * A write's rejection: STORAGE_FULL when its commit failed for want of space, else the error
   * unchanged. Use as the rejection handler of a write's promise.
   */
  readonly failed = async (error: unknown): Promise<never> => {
    const cause = isCommitFailure(error) ? await commitCause(error) : error;
    const reason = noSpaceReason(cause, this.dataDir);
    if (reason === undefined) throw error;
    this.enter(reason, cause);
    throw new EngineError('STORAGE_FULL', { reason }, { cause });
  };

  /** A durable commit while full: space has returned. One branch when not full. */
  readonly durable = (): void => {
    if (this.fullSince === undefined) return;
    const fullForMs = Date.now() - this.fullSince;
    this.fullSince = undefined;
    this.log?.info({ fullForMs }, 'storage: a commit succeeded again; writes resume');
  };

  /** The storage became full (a failed commit, or the free-space reserve reached): logged once until writes resume. */
  enter(reason: string, cause?: unknown): void {
    if (this.fullSince !== undefined) return;
    this.fullSince = Date.now();
    this.log?.warn({ reason, ...(cause === undefined ? {} : { cause: cause instanceof Error ? cause.message : String(cause) }) },
      'storage: FULL, writes are refused (STORAGE_FULL) until space is freed; reads go on, nothing stored is lost (logged once until writes resume)');
  }
}

/**
 * lmdb-js leaves two promises of a failed commit without a handler (the turn's batch promise, and
 * `commitError` when its writer never asks for it): without this, Node ends the process on them.
 * Installed once per process while a store is open; every other unhandled rejection keeps Node's
 * default (the process ends) unless someone else listens.
 */
let openStores = 0;

function isLeftoverOfFullCommit(reason: unknown, promise: Promise<unknown>): boolean {
  if (reason instanceof EngineError && reason.id === 'STORAGE_FULL') return true;
  if (isCommitFailure(reason)) {
    reason.commitError.catch(() => undefined);
    return true;
  }
  // lmdb-js's own `commitError` promise carries its `reject` function.
  return typeof (promise as Promise<unknown> & { reject?: unknown }).reject === 'function' && noSpaceReason(reason) !== undefined;
}

function onUnhandledRejection(reason: unknown, promise: Promise<unknown>): void {
  if (isLeftoverOfFullCommit(reason, promise)) return;
  // Only listener: keep Node's default for everything else.
  if (process.listenerCount('unhandledRejection') === 1) throw reason;
}

export function guardFullCommitLeftovers(): () => void {
  if (openStores++ === 0) process.on('unhandledRejection', onUnhandledRejection);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--openStores === 0) process.removeListener('unhandledRejection', onUnhandledRejection);
  };
}
