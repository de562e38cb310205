/**
 * A blocking call from a worker thread to the main thread: the worker posts a request on its
 * port and sleeps on a shared word (Atomics.wait) until the main thread has posted the reply and
 * bumped the word; the reply is then taken off the port synchronously (receiveMessageOnPort).
 * SQLite calls virtual tables synchronously, and this is how those calls reach the engine's
 * tables without SQLite ever running on the main thread.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { TableReply, TableRequest } from './sql-protocol';

export class SyncCaller {
  private readonly word: Int32Array;

  constructor(private readonly port: MessagePort, signal: SharedArrayBuffer) {
    this.word = new Int32Array(signal);
  }

  /** Sends a request and waits for its reply. */
  call(request: TableRequest): TableReply {
    const seen = Atomics.load(this.word, 0);
    this.port.postMessage(request);
    for (;;) {
      Atomics.wait(this.word, 0, seen);
      const message = receiveMessageOnPort(this.port);
      if (message !== undefined) return message.message as TableReply;
    }
  }

  /** Sends a request whose reply nobody waits for (closing a scan). */
  tell(request: TableRequest): void {
    this.port.postMessage({ ...request, noReply: true } satisfies TableRequest);
  }
}

/** Main-thread side: posts a reply and wakes the worker. */
export function reply(port: MessagePort, signal: Int32Array, value: TableReply): void {
  port.postMessage(value);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}
