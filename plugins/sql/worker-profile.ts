/**
 * Node options of an SQL worker. A worker inherits the process's options, and `--cpu-prof-name`
 * (what the bench's BENCH_CPU_PROF_DIR sets) names one file for every thread: each thread wrote its
 * profile over the others', and the main thread's, written last, was the only one left. Each
 * worker gets a name of its own (`<name>-sql-worker-<n>.cpuprofile`); without a name Node already
 * gives each thread its own file.
 */
const NAME = '--cpu-prof-name=';
const SUFFIX = '.cpuprofile';
let started = 0;

export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  if (!execArgv.some((arg) => arg.startsWith(NAME))) return [...execArgv];
  const n = ++started;
  return execArgv.map((arg) => {
    if (!arg.startsWith(NAME)) return arg;
    const name = arg.slice(NAME.length);
    const base = name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
    return `${NAME}${base}-sql-worker-${n}${SUFFIX}`;
  });
}
