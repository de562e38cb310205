/**
 * Which other live processes have a data folder's LMDB environment open (its reader table in
 * lock.mdb), so that `engine check`, which opens the store and may write to it (the topic index
 * it completes at open is written at close), refuses the folder of a running server.
 */
import { open } from 'lmdb';
import { MAX_DBS } from './environment';

export function otherProcessesUsing(dataDir: string): number[] {
  const root = open({ path: dataDir, noSubdir: false, maxDbs: MAX_DBS, readOnly: true });
  let list: string;
  try {
    list = root.readerList();
  } finally {
    void root.close();
  }
  const pids = new Set<number>();
  for (const line of list.split('\n').slice(1)) {
    const pid = Number(line.trim().split(/\s+/)[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) pids.add(pid);
  }
  return [...pids];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
