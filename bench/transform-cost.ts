/**
 * `node dist/bench/transform-cost.js [messages]`: what transform fields cost the append path
 * (docs/storage.md, "Transform fields"). Appends JSON sensor payloads to one topic through the
 * message log port, a turn of 500 messages per `appendEach` as the broker batches publishes, each
 * awaited (one synced commit per turn), with: no transform fields; three fields
 * (`{"temperature": 21.5, "line": "L1", "status": {"ok": true}}` → float, varchar, bit); the same
 * three with the float indexed. Variants alternate over three rounds on a fresh data folder each;
 * the median is reported, with its ratio to "none" of the same round. A second argument `none`
 * measures only that variant (it needs nothing of transform fields: it runs on a build without
 * them, for a before/after of the append path).
 */
import { openLmdbStorage } from '../plugins/storage-lmdb/lmdb-storage';
import type { MessageInput } from '../kernel/storage/storage-port';
import type { TransformFieldInput } from '../kernel/storage/message-log-port';
import { formatNumber, removeTempDir, table, tempDir } from './load';

const TURN = 500;
const TOTAL = Number(process.argv[2] ?? 200_000);
const ROUNDS = 3;

const FIELDS: TransformFieldInput[] = [
  { recordPath: 'source_payload.temperature', fieldName: 'temperature', type: 'float' },
  { recordPath: 'source_payload.line', fieldName: 'line', type: 'varchar', length: 8 },
  { recordPath: 'source_payload.status.ok', fieldName: 'ok', type: 'bit' },
];
const ALL_VARIANTS: Array<{ name: string; fields: TransformFieldInput[] }> = [
  { name: 'none', fields: [] },
  { name: 'three fields', fields: FIELDS },
  { name: 'three fields, one indexed', fields: [{ ...FIELDS[0], indexName: 'by_temperature' }, FIELDS[1], FIELDS[2]] },
];
const VARIANTS = process.argv[3] === 'none' ? ALL_VARIANTS.slice(0, 1) : ALL_VARIANTS;

function message(i: number, createTs: string): MessageInput {
  const value = `{"temperature":${(i % 400) / 10},"line":"L${i % 7}","status":{"ok":${i % 2 === 0}}}`;
  return {
    createTs, payload: { type: 'json', value }, qos: 0, retain: false, contentType: null, correlationData: null,
    responseTopic: null, expirySeconds: null, userProperties: null, payloadFormat: null, publisher: 'bench',
  };
}

async function measure(fields: TransformFieldInput[]): Promise<number> {
  const dataDir = tempDir('bench-transform');
  const storage = await openLmdbStorage({ dataDir, defaultDatabase: 'main' });
  try {
    const log = storage.messageLog;
    await log.ensureTopic('plant/sensor');
    if (fields.length > 0) await log.configureTransform('plant/sensor', fields);
    const createTs = new Date().toISOString().slice(0, 23);
    const turns: Array<Array<{ topic: string; message: MessageInput }>> = [];
    for (let t = 0; t < TOTAL / TURN; t++) {
      const batch = [];
      for (let i = 0; i < TURN; i++) batch.push({ topic: 'plant/sensor', message: message(t * TURN + i, createTs) });
      turns.push(batch);
    }
    const started = performance.now(); // elapsed time of the run, seen by no client
    for (const batch of turns) await log.appendEach(batch);
    return TOTAL / ((performance.now() - started) / 1000);
  } finally {
    await storage.close();
    removeTempDir(dataDir);
  }
}

async function main(): Promise<void> {
  const rates = VARIANTS.map(() => [] as number[]);
  const ratios = VARIANTS.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    const inRound: number[] = [];
    for (let v = 0; v < VARIANTS.length; v++) inRound.push(await measure(VARIANTS[v].fields));
    for (let v = 0; v < VARIANTS.length; v++) {
      rates[v].push(inRound[v]);
      ratios[v].push(inRound[v] / inRound[0]);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const noneRate = median(rates[0]);
  process.stdout.write(`${formatNumber(TOTAL)} JSON messages, ${TURN} per awaited appendEach, median of ${ROUNDS} rounds\n`);
  process.stdout.write(`${table(['variant', 'messages/s', 'vs none (same round)', 'µs per message over none'], VARIANTS.map((variant, v) => [
    variant.name, formatNumber(Math.round(median(rates[v]))), median(ratios[v]).toFixed(2),
    v === 0 ? '' : ((1e6 / median(rates[v])) - (1e6 / noneRate)).toFixed(2),
  ]))}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
