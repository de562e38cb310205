/**
 * Runs the MQTT load generator (`mqtt-bench.mjs`, a separate tool, not part of this repository:
 * env BENCH_MQTT_TOOL names its file; docs/benchmarks.md "MQTT") in its own process, from the project root (it loads the project's
 * mqtt-packet), and returns the JSON line it prints. A run that exceeds its time is killed; a run
 * that fails returns its `error` instead of throwing, so one scenario cannot end the bench.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The fields of mqtt-bench's JSON line that the bench reads. */
export interface GeneratorResult {
  error?: string;
  pub_rate?: number;
  deliv_rate?: number;
  acked_rate?: number;
  disconnects?: number;
  errors?: number | Record<string, number>;
  broker_cpu_pct?: number | null;
  broker_rss_mb?: number | null;
  latency?: { p50_ms: number; p99_ms: number } | null;
  opened?: number;
  failed?: number;
  alive_after_hold?: number;
  connect_rate?: number;
  broker_rss_mb_before?: number | null;
  broker_rss_mb_after?: number | null;
  broker_kb_per_conn?: number | null;
  connect_latency?: { p50_ms: number; p99_ms: number } | null;
}

const projectRoot = join(__dirname, '..', '..');

export function generatorPath(): string {
  const tool = process.env.BENCH_MQTT_TOOL;
  if (tool === undefined || tool === '') throw new Error('the MQTT load generator is not set: set BENCH_MQTT_TOOL to the path of mqtt-bench.mjs');
  return resolve(tool);
}

export function checkGenerator(): void {
  const tool = generatorPath();
  if (!existsSync(tool)) throw new Error(`the MQTT load generator is missing: ${tool} (set BENCH_MQTT_TOOL to its path)`);
}

const live = new Set<ReturnType<typeof spawn>>();
process.on('exit', () => { for (const child of live) child.kill('SIGKILL'); });

/**
 * `node mqtt-bench.mjs --port PORT ...args`, killed after `timeoutMs`. `onConnected` is called
 * once the generator reports its clients connected (its load starts then).
 */
export function runGenerator(port: number, args: string[], timeoutMs: number, onConnected?: () => void): Promise<GeneratorResult> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [generatorPath(), '--port', String(port), ...args], {
      cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    let out = '';
    let err = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (onConnected && text.includes('[mqtt-bench] connected')) {
        onConnected();
        onConnected = undefined;
      }
      err = (err + text).slice(-2000);
    });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      live.delete(child);
      if (timedOut) return resolveRun({ error: `the load generator did not finish within ${Math.round(timeoutMs / 1000)} s` });
      const line = out.trim().split('\n').pop() ?? '';
      try {
        const result = JSON.parse(line) as GeneratorResult;
        if (code !== 0 && !result.error) result.error = `the load generator exited with code ${code}`;
        resolveRun(result);
      } catch {
        const why = err.split('\n').find((line) => /Error/.test(line)) ?? err.trim().split('\n').pop() ?? '';
        resolveRun({ error: `the load generator printed no result (code ${code}): ${why.trim()}` });
      }
    });
  });
}

/** Waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
