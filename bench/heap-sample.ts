/**
 * Allocation per function of a running server, for measuring bytes per message: preload it with
 * `node -r ./dist/bench/heap-sample.js dist/main.js` and `BENCH_HEAP_SAMPLE=<file.json>`. On
 * SIGUSR2 (send it once the paced load is steady) it starts V8's sampling heap profiler, counting
 * objects the garbage collector already freed too (without them a profile shows what is alive,
 * not what a message costs); `BENCH_HEAP_SAMPLE_SECONDS` later (default 3) it writes
 * `{ sampledSeconds, totalBytes, byFunction: [{ name, url, line, bytes }] }` to the file. The
 * server keeps running. Divide `totalBytes` by the messages of the sampled seconds (the paced
 * rate × sampledSeconds): pace the load (mqtt-bench `--rate`), since at full speed the bytes per
 * message vary with how far the collector fell behind.
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

interface FunctionBytes { name: string; url: string; line: number; bytes: number }

const target = process.env.BENCH_HEAP_SAMPLE;
if (target) {
  const seconds = Number(process.env.BENCH_HEAP_SAMPLE_SECONDS ?? 3);
  const session = new Session();
  session.connect();
  process.once('SIGUSR2', () => {
    const startedAt = performance.now();
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    setTimeout(() => {
      const sampledSeconds = (performance.now() - startedAt) / 1000;
      session.post('HeapProfiler.stopSampling', (error, result) => {
        if (error) process.stderr.write(`heap-sample: ${error.message}\n`);
        else writeFileSync(target, JSON.stringify({ sampledSeconds, ...summarise((result as { profile: { head: SampleNode } }).profile.head) }));
      });
    }, seconds * 1000).unref();
  });
}

/** Self bytes per function (name, file, line), largest first. */
function summarise(head: SampleNode): { totalBytes: number; byFunction: FunctionBytes[] } {
  const byKey = new Map<string, FunctionBytes>();
  let totalBytes = 0;
  const stack: SampleNode[] = [head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    totalBytes += node.selfSize;
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const key = `${functionName}|${url}|${lineNumber}`;
      const entry = byKey.get(key) ?? { name: functionName || '(anonymous)', url: url.replace(/^.*\/(dist|node_modules)\//, ''), line: lineNumber + 1, bytes: 0 };
      entry.bytes += node.selfSize;
      byKey.set(key, entry);
    }
    for (const child of node.children) stack.push(child);
  }
  return { totalBytes, byFunction: [...byKey.values()].sort((a, b) => b.bytes - a.bytes) };
}
