/**
 * The "bare route" reference: a plain fastify server doing, for one fixed table, the same LMDB
 * operations as the engine's REST routes, with nothing else (no authentication, no catalog, no
 * command bus, no schemas, no value conversion). Same paths as the engine so the same load runs
 * against both.
 *
 *   BENCH_PORT=… BENCH_DATA_DIR=… node dist/bench/reference-server.js
 *
 * Durability matches the engine (plugins/storage-lmdb/environment.ts): the environment is opened
 * with `overlappingSync: true` and every write is a `root.transaction` awaited with `durably`
 * (until its commit is synced), so no answer is sent before its commit is on disk. Writes of one event-loop turn share one
 * commit, as in the engine.
 *
 * Storage layout as in the engine: records in `r:1` (key = number id, value = msgpack array of
 * [name, qty, price, note]), the `qty` index in `i:1` (13-byte key, empty value).
 */
import Fastify from 'fastify';
import { durably, openAsEngine } from './raw-lmdb';
import { integerIndexKey } from './rows';

interface Row { name: string; qty: number; price: number; note: string }

const EMPTY = Buffer.alloc(0);
const PREFIX = '/engine/api/v1';

async function main(): Promise<void> {
  const port = Number(process.env.BENCH_PORT);
  const dataDir = process.env.BENCH_DATA_DIR;
  if (!port || !dataDir) throw new Error('BENCH_PORT and BENCH_DATA_DIR are required');

  const root = openAsEngine(dataDir);
  const records = root.openDB<unknown[], number>('r:1', {});
  const index = root.openDB<Buffer, Buffer>('i:1', { keyEncoding: 'binary', encoding: 'binary' });
  let lastId = 0;
  for (const key of records.getKeys({ reverse: true, limit: 1 })) lastId = key;

  const fastify = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });

  fastify.get('/', async () => ({ ok: true }));
  // Table and index creation: nothing to do (one fixed table), answered for symmetry.
  fastify.post(`${PREFIX}/table/:db/:table`, async () => ({}));
  fastify.post(`${PREFIX}/index/:db/:table/:index`, async () => ({}));

  fastify.post<{ Body: Row | Row[] }>(`${PREFIX}/record/:db/:table`, async (request) => {
    const rows = Array.isArray(request.body) ? request.body : [request.body];
    const ids = rows.map(() => ++lastId);
    await durably(root, root.transaction(() => {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        records.put(ids[i], [row.name, row.qty, row.price, row.note]);
        index.put(integerIndexKey(row.qty, ids[i]), EMPTY);
      }
    }));
    return { _ids: ids };
  });

  fastify.get<{ Params: { id: string } }>(`${PREFIX}/record/:db/:table/:id`, async (request, reply) => {
    const values = records.get(Number(request.params.id));
    if (!values) return reply.code(404).send({ errorCode: 404 });
    return { name: values[0], qty: values[1], price: values[2], note: values[3] };
  });

  fastify.post<{ Querystring: { top?: string }; Body: { find: { qty: { operator: string; value: number } } } }>(
    `${PREFIX}/query/:db/:table/:index`,
    async (request) => {
      const top = Number(request.query.top ?? 10);
      const start = integerIndexKey(request.body.find.qty.value, 0);
      const result: Record<string, unknown>[] = [];
      for (const key of index.getKeys({ start, limit: top })) {
        const id = Number(key.readBigUInt64BE(5));
        const values = records.get(id);
        if (values) result.push({ _id: id, name: values[0], qty: values[1], price: values[2], note: values[3] });
      }
      return { _records: result };
    },
  );

  await fastify.listen({ host: '127.0.0.1', port });

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    fastify.close()
      .then(() => root.close())
      .then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`reference-server: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
