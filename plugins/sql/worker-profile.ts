/**
 * Node options of an SQL worker. A worker inherits the process's options when none are given,
 * and that is what it gets unless the process writes a CPU profile under a name of its own:
 * `--cpu-prof-name` (what the bench's BENCH_CPU_PROF_DIR sets) names one file for every thread,
 * so each thread wrote its profile over the others', and the main thread's, written last, was
 * the only one left. Then each worker is given its profile options, named
 * `<name>-sql-worker-<n>.cpuprofile`, and only those: Node refuses a worker whose options, given
 * explicitly, hold a V8 option (ERR_WORKER_INVALID_EXEC_ARGV), and the server runs with
 * `--max-semi-space-size=8` (`npm start`, the bin's `#!` line); V8's options are the process's
 * anyway. Without a name Node already gives each thread its own file.
 */
const PROFILE = '--cpu-prof';
const NAME = '--cpu-prof-name=';
const SUFFIX = '.cpuprofile';
let started = 0;

/** The worker's `execArgv`: undefined (inherited) unless the process names its CPU profile. */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] | undefined {
  if (!execArgv.some((arg) => arg.startsWith(NAME))) return undefined;
  const n = ++started;
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i];
    if (!arg.startsWith(PROFILE)) continue;
    if (arg.startsWith(NAME)) {
      const name = arg.slice(NAME.length);
      const base = name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
      kept.push(`${NAME}${base}-sql-worker-${n}${SUFFIX}`);
      continue;
    }
    kept.push(arg);
    // `--cpu-prof-dir /tmp`: its value is the next word.
    if (arg !== PROFILE && !arg.includes('=') && i + 1 < execArgv.length) kept.push(execArgv[++i]);
  }
  return kept;
}
