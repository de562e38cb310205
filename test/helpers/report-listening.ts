/**
 * Preloaded (`node --require`) into an engine child process by the black-box tests when they cannot
 * wait for the engine's own `listening` log line (a log level above info hides it). Reports every
 * server that starts listening as one JSON line `{"port":…,"address":…}` on file descriptor 3, a
 * pipe the test reads. It only observes, through Node's documented `net.server.listen` tracing
 * channel (published once `listen()` has completed and the server accepts connections).
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeSync } from 'node:fs';
import type { Server } from 'node:net';

subscribe('tracing:net.server.listen:asyncEnd', (message) => {
  const address = (message as { server: Server }).server.address();
  if (address && typeof address === 'object') writeSync(3, `${JSON.stringify({ port: address.port, address: address.address })}\n`);
});
