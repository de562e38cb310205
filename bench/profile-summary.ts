/**
 * Summarizes a V8 `.cpuprofile` (as written by `node --cpu-prof`, e.g. the engine children of a
 * bench run with BENCH_CPU_PROF_DIR set):
 *
 *   node dist/bench/profile-summary.js FILE.cpuprofile [topN]
 *
 * prints the share of samples per source file (self time), the top functions by self time, and
 * the top functions of this project (kernel/, plugins/) by total (inclusive) time.
 */
import { readFileSync } from 'node:fs';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[]; hitCount?: number }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

function shortFile(url: string): string {
  if (!url) return '(native / V8)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) return path.slice(nm + 'node_modules/'.length);
  const dist = path.indexOf('/dist/');
  if (dist >= 0) return path.slice(dist + '/dist/'.length);
  return path;
}

function label(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${shortFile(frame.url)}:${frame.lineNumber + 1}`;
}

export function summarize(profile: Profile, topN = 25): string {
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  // Self time per node from samples and time deltas (µs).
  const selfTime = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  for (const t of selfTime.values()) total += t;
  let idle = 0;

  const perFile = new Map<string, number>();
  const perFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') {
      if (name === '(idle)') idle += time;
      perFile.set(name, (perFile.get(name) ?? 0) + time);
      perFunction.set(name, (perFunction.get(name) ?? 0) + time);
      continue;
    }
    const file = shortFile(node.callFrame.url);
    perFile.set(file, (perFile.get(file) ?? 0) + time);
    const fn = label(node.callFrame);
    perFunction.set(fn, (perFunction.get(fn) ?? 0) + time);
    // Inclusive time of each project function on the stack (counted once per sample stack).
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!/\/dist\/(kernel|plugins)\//.test(frame.url)) continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + time);
    }
  }
  const busy = total - idle;
  const pct = (t: number, of: number): string => `${((100 * t) / of).toFixed(1)}%`.padStart(6);
  const top = (map: Map<string, number>, n: number, of: number): string[] =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `${pct(t, of)}  ${k}`);
  return [
    `profile: ${(total / 1e6).toFixed(1)} s sampled, ${pct(idle, total).trim()} idle; percentages below are of the busy time (${(busy / 1e6).toFixed(1)} s)`,
    '',
    'self time by file:',
    ...top(new Map([...perFile].filter(([k]) => k !== '(idle)')), topN, busy),
    '',
    'self time by function:',
    ...top(new Map([...perFunction].filter(([k]) => k !== '(idle)')), topN, busy),
    '',
    'total (inclusive) time of project functions:',
    ...top(inclusive, topN, busy),
  ].join('\n');
}

if (require.main === module) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: profile-summary.js FILE.cpuprofile [topN]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(n) || 25)}\n`);
}
