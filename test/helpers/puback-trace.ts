/**
 * Reads an `strace -f -xx` trace of the server under pipelined QoS 1 load (many PUBLISH in
 * flight, so commits follow one another while earlier ones are being synced) and tells, for
 * every PUBACK it wrote, whether the message it acknowledges was on disk first. A global rule
 * ("nothing unsynced when an answer goes out", sync-trace.ts) cannot hold here: the next commit's
 * pages are rightly written while an earlier commit's PUBACKs go out. So each message is followed:
 * - its payload carries a marker naming its packet id (`markerPayload`); the first write to a
 *   `data.mdb` descriptor whose bytes hold the marker is where its commit wrote it;
 * - fdatasync or fsync of a `data.mdb` descriptor, or msync, syncs every write that had returned
 *   before the sync was entered, once the sync returns;
 * - a PUBACK (bytes 40 02 id id in a write to any other descriptor) must come after such a sync of
 *   its message's write: at the PUBACK's entry, a sync entered after that write has returned.
 * Packet ids must be unique across the run (each publisher its own range).
 */
import { FD_SYNCS, WRITES, walkTrace, type Call } from './sync-trace';

const MARKER = 'QMK';
/** `-xx` prints every byte as \xNN: the marker's bytes, then five ASCII digits. */
const MARKER_HEX = new RegExp(`${hexOf(MARKER).replace(/\\/g, '\\\\')}((?:\\\\x3[0-9]){5})`, 'g');
const PUBACK_HEX = /\\x40\\x02\\x([0-9a-f]{2})\\x([0-9a-f]{2})/g;

function hexOf(text: string): string {
  return [...Buffer.from(text)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
}

/** A payload whose bytes name the packet id it is published with (16 bytes, as in the bench). */
export function markerPayload(packetId: number): Buffer {
  return Buffer.from(`${MARKER}${String(packetId).padStart(5, '0')}........`);
}

export interface PubackReport {
  /** PUBACKs seen written. */
  pubacks: number;
  /** Distinct messages whose first write to data.mdb was seen. */
  written: number;
  /** How many data.mdb descriptors were seen opened (0 means the trace missed the store). */
  dataFiles: number;
  /** One line per PUBACK written before its message was synced (or never seen written). */
  early: string[];
}

export function checkPubackTrace(trace: string): PubackReport {
  const dataFds = new Map<number, boolean>();
  let dataFiles = 0;
  /** packet id → trace line where the write first holding its message returned. */
  const writtenAt = new Map<number, number>();
  /** The latest entry line of a data sync that has returned. */
  let syncedBefore = -1;
  let pubacks = 0;
  const early: string[] = [];

  const onEntry = (call: Call): void => {
    if (!WRITES.has(call.name) && call.name !== 'sendmsg' && call.name !== 'sendto') return;
    const fd = Number(/^(\d+)/.exec(call.args)?.[1] ?? NaN);
    if (dataFds.has(fd)) return;
    for (const match of call.args.matchAll(PUBACK_HEX)) {
      pubacks++;
      const id = parseInt(match[1], 16) * 256 + parseInt(match[2], 16);
      const written = writtenAt.get(id);
      if (written === undefined) early.push(`PUBACK ${id} (line ${call.entry + 1}): its message was never written to data.mdb before`);
      else if (syncedBefore <= written) early.push(`PUBACK ${id} (line ${call.entry + 1}): its message (written line ${written + 1}) not synced yet`);
    }
  };

  const onExit = (call: Call, args: string, result: number, exit: number): void => {
    if (result < 0 && call.name !== 'msync') return;
    const fd = Number(/^(\d+)/.exec(args)?.[1] ?? NaN);
    if ((call.name === 'openat' || call.name === 'open') && /\/data\.mdb"|\\x2f\\x64\\x61\\x74\\x61\\x2e\\x6d\\x64\\x62"/.test(args)) {
      dataFds.set(result, /O_DSYNC|O_SYNC/.test(args));
      dataFiles++;
    } else if (call.name === 'close') {
      dataFds.delete(fd);
    } else if (WRITES.has(call.name) && dataFds.has(fd)) {
      for (const match of args.matchAll(MARKER_HEX)) {
        const id = Number(match[1].replace(/\\x3/g, ''));
        // Through an O_DSYNC descriptor: on disk when the write returns (-2: before any sync).
        if (!writtenAt.has(id)) writtenAt.set(id, dataFds.get(fd) ? -2 : exit);
      }
    } else if ((FD_SYNCS.has(call.name) && dataFds.has(fd)) || (call.name === 'msync' && result === 0)) {
      if (call.entry > syncedBefore) syncedBefore = call.entry;
    }
  };

  walkTrace(trace, { onEntry, onExit });
  return { pubacks, written: writtenAt.size, dataFiles, early };
}
