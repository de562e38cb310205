/**
 * The reference broker of `npm run bench -- mqtt`: Aedes 1.2 with its defaults (in-memory
 * persistence, anonymous clients) on a plain net server, in its own process so that its CPU and
 * RSS are its own. Env BENCH_PORT; prints `listening` once it accepts connections; SIGTERM stops it.
 */
import { createServer } from 'node:net';
// Aedes 1.x is an ES module: Node 22.12+ (and 20.19+) load it through require, without a warning.
import { Aedes } from 'aedes';

async function main(): Promise<void> {
  const port = Number(process.env.BENCH_PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_PORT must name a port');
  const broker = await Aedes.createBroker();
  const server = createServer(broker.handle);
  // The bench's flood and its many connections end with resets; those are not the broker's errors.
  broker.on('connectionError', () => {});
  broker.on('clientError', () => {});
  server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
  process.once('SIGTERM', () => {
    server.close();
    broker.close(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`aedes-server: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
