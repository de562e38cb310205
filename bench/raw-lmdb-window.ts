/**
 * The disk's bound for a QoS 1 publisher with a window: lmdb-js alone (no broker, no socket)
 * keeps `window` puts in flight, each awaited until its commit is durable before the next one is
 * issued, as a publisher does with its PUBACKs. Puts issued in one event-loop turn share a
 * commit, as the broker's appends do. No broker can acknowledge durable messages faster than
 * this on the same disk; Aedes acknowledges from memory.
 *
 *   node dist/bench/raw-lmdb-window.js <window> <seconds> <dataDir>
 *
 * prints one JSON line `{window, puts, seconds, putsPerSecond, p50Ms, p99Ms}` (the percentiles are
 * of each measured put's time from issue to durable: the latency floor of a durable PUBACK). The environment is opened with
 * the engine's options (plugins/storage-lmdb/environment.ts: `overlappingSync: true`, each put
 * awaited until synced as the engine awaits its appends: `durably`), and each
 * value is a 16-byte payload with the ~24 bytes of fields the log keeps with it.
 */
import { durably, openAsEngine } from './raw-lmdb';

export interface WindowResult {
  window: number;
  puts: number;
  seconds: number;
  putsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: Float64Array, fraction: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

const VALUE = Buffer.alloc(40, 0x61);
const WARM_UP_SECONDS = 1;

export function rawWindowedPuts(window: number, seconds: number, dataDir: string): Promise<WindowResult> {
  const root = openAsEngine(dataDir);
  const db = root.openDB<Buffer, number>('log', { encoding: 'binary' });
  let key = 0;
  let counted = 0;
  let start = 0n;
  let stopAt = 0n;
  let inFlight = 0;
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const measuring = (): boolean => start !== 0n;
    const finish = (): void => {
      const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
      const sorted = Float64Array.from(latencies).sort();
      root.close().then(() => resolve({
        window, puts: counted, seconds: elapsed, putsPerSecond: counted / elapsed, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99),
      }), reject);
    };
    const issue = (): void => {
      inFlight++;
      const issued = process.hrtime.bigint();
      durably(root, db.put(++key, VALUE)).then(() => {
        inFlight--;
        const now = process.hrtime.bigint();
        if (measuring()) counted++;
        // Latency of the puts issued inside the measurement only (not the warm-up's).
        if (measuring() && issued >= start) latencies.push(Number(now - issued) / 1e6);
        if (measuring() && now >= stopAt) {
          if (inFlight === 0) finish();
          return;
        }
        issue();
      }, reject);
    };
    for (let i = 0; i < window; i++) issue();
    setTimeout(() => {
      start = process.hrtime.bigint();
      stopAt = start + BigInt(Math.round(seconds * 1e9));
    }, WARM_UP_SECONDS * 1000);
  });
}

if (require.main === module) {
  const [window, seconds, dataDir] = process.argv.slice(2);
  if (!(Number(window) > 0) || !dataDir) {
    process.stderr.write('usage: raw-lmdb-window.js <window> <seconds> <dataDir>\n');
    process.exit(2);
  }
  rawWindowedPuts(Number(window), Number(seconds) || 5, dataDir).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
