/**
 * Reads an `strace -f` trace of the server and tells, for every HTTP response it wrote, whether
 * data written to LMDB's `data.mdb` before that response was still unsynced when the response
 * went out. That is the durability promise seen from the kernel's side: SIGKILL keeps the page
 * cache, so only the sync calls show whether an acknowledged commit was on disk.
 *
 * Rules, in trace order (strace prints a call's line at its exit, or an `<unfinished ...>` line
 * at its entry and a `<... resumed>` line at its exit):
 * - a write to a `data.mdb` descriptor (write, writev, pwrite64, pwritev) is unsynced once it
 *   returns, unless the descriptor was opened with O_DSYNC or O_SYNC (LMDB writes its meta page
 *   that way: durable when the call returns);
 * - fdatasync or fsync of a `data.mdb` descriptor, or msync, syncs every write that had returned
 *   before the sync call was entered, once the sync returns;
 * - a response is a write whose data starts with `HTTP/1.1 `; at its entry the writes still
 *   unsynced are counted against it.
 */

export interface TracedResponse {
  /** The HTTP status the response carried. */
  status: number;
  /** Writes to data.mdb that returned since the previous response (the commit of this request). */
  dataWrites: number;
  /** Writes to data.mdb that had returned but were not synced when this response was written. */
  unsyncedWrites: number;
}

export interface SyncReport {
  responses: TracedResponse[];
  /** How many data.mdb descriptors were seen opened (0 means the trace missed the store). */
  dataFiles: number;
}

export interface Call {
  name: string;
  /** The call's arguments as strace printed them (up to the closing parenthesis at its exit). */
  args: string;
  /** The trace line where the call was entered. */
  entry: number;
}

export interface TraceVisitor {
  /** A call entered (its arguments as printed at entry). */
  onEntry(call: Call): void;
  /** A call returned `result` at trace line `exit`, with its full arguments. */
  onExit(call: Call, args: string, result: number, exit: number): void;
}

const UNFINISHED = /^(\w+)\((.*) <unfinished \.\.\.>$/;
const RESUMED = /^<\.\.\. (\w+) resumed>(.*)$/;
const COMPLETE = /^(\w+)\((.*)$/;
/** The result at the end of a call's text: `...) = 42` or `...) = -1 EBADF (Bad file descriptor)`. */
const RESULT = /^(.*)\)\s+=\s+(-?\d+)(?:\s.*)?$/;
export const WRITES = new Set(['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2']);
export const FD_SYNCS = new Set(['fdatasync', 'fsync']);
const RESPONSE = /^\d+, (?:\[\{iov_base=)?"HTTP\/1\.1 (\d{3})/;

export function checkSyncTrace(trace: string): SyncReport {
  /** data.mdb descriptors → whether writes through them are synchronous. */
  const dataFds = new Map<number, boolean>();
  let dataFiles = 0;
  /** Exit positions of data writes not yet synced. */
  let unsynced: number[] = [];
  let writesSinceResponse = 0;
  const responses: TracedResponse[] = [];

  const onEntry = (call: Call): void => {
    if (!WRITES.has(call.name) && call.name !== 'sendmsg' && call.name !== 'sendto') return;
    const response = RESPONSE.exec(call.args);
    if (!response) return;
    responses.push({ status: Number(response[1]), dataWrites: writesSinceResponse, unsyncedWrites: unsynced.length });
    writesSinceResponse = 0;
  };

  const onExit = (call: Call, args: string, result: number, exit: number): void => {
    if (result < 0 && call.name !== 'msync') return;
    const fd = Number(/^(\d+)/.exec(args)?.[1] ?? NaN);
    if ((call.name === 'openat' || call.name === 'open') && /\/data\.mdb"/.test(args)) {
      dataFds.set(result, /O_DSYNC|O_SYNC/.test(args));
      dataFiles++;
    } else if (call.name === 'close') {
      dataFds.delete(fd);
    } else if (WRITES.has(call.name) && dataFds.has(fd)) {
      writesSinceResponse++;
      if (!dataFds.get(fd)) unsynced.push(exit);
    } else if ((FD_SYNCS.has(call.name) && dataFds.has(fd)) || (call.name === 'msync' && result === 0)) {
      unsynced = unsynced.filter((written) => written > call.entry);
    }
  };

  walkTrace(trace, { onEntry, onExit });
  return { responses, dataFiles };
}

/** Walks an `strace -f` trace in order, pairing `<unfinished ...>` entries with their `<... resumed>` exits. */
export function walkTrace(trace: string, { onEntry, onExit }: TraceVisitor): void {
  const pending = new Map<string, Call>();
  const lines = trace.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = /^(\d+)\s+(.*)$/.exec(lines[index]);
    if (!line) continue;
    const [, pid, text] = line;
    const resumed = RESUMED.exec(text);
    if (resumed) {
      const call = pending.get(pid);
      pending.delete(pid);
      if (!call) continue;
      const done = RESULT.exec(`${call.args}${resumed[2]}`);
      if (done) onExit(call, done[1], Number(done[2]), index);
      continue;
    }
    const unfinished = UNFINISHED.exec(text);
    if (unfinished) {
      const call = { name: unfinished[1], args: unfinished[2], entry: index };
      pending.set(pid, call);
      onEntry(call);
      continue;
    }
    const complete = COMPLETE.exec(text);
    if (!complete) continue;
    const done = RESULT.exec(complete[2]);
    const call = { name: complete[1], args: done ? done[1] : complete[2], entry: index };
    onEntry(call);
    if (done) onExit(call, done[1], Number(done[2]), index);
  }
}
