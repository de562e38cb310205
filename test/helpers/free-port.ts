/**
 * A port for a server a test starts later (a child process, a node that keeps its port across
 * restarts). Asking the OS for port 0 hands out a port of the ephemeral range (32768-60999 on
 * Linux), which the OS also gives to outgoing connections: between the question and the child's
 * bind, a client socket of this or another process could take it (seen: EADDRINUSE at a cluster
 * node's start). So the port is drawn below that range, at random, and checked free on `host`.
 */
import { createServer } from 'node:net';

const LOWEST = 20_000;
const HIGHEST = 32_000;

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST));
    if (await bindable(port, host)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${HIGHEST} on ${host}`);
}
