/**
 * A blocking call from a worker thread to the main thread. SQLite calls virtual tables
 * synchronously, and this is how those calls reach the engine's tables without SQLite ever
 * running on the main thread.
 *
 * The worker posts a request on its port and sleeps on a shared word (Atomics.wait). The main
 * thread writes the reply into a shared buffer (v8 serialization), then bumps the word and wakes
 * the worker, which reads the reply from the buffer at once. A reply larger than the buffer goes
 * on the port instead (the length word says so) and is taken off it synchronously
 * (receiveMessageOnPort): a message may reach the port a moment after the wake-up, so the shared
 * buffer is the usual path.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { deserialize, serialize } from 'node:v8';
import type { TableReply, TableRequest } from './sql-protocol';

/** Bytes of the shared reply buffer of one worker. */
export const REPLY_BYTES = 4 * 1024 * 1024;
/** Control words: [0] replies sent, [1] length of the reply in the buffer (-1: on the port). */
const CONTROL_BYTES = 8;

export function replyBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(CONTROL_BYTES + REPLY_BYTES);
}

export class SyncCaller {
  private readonly control: Int32Array;
  private readonly data: Buffer;

  constructor(private readonly port: MessagePort, shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, 2);
    this.data = Buffer.from(shared, CONTROL_BYTES, REPLY_BYTES);
  }

  /** Sends a request and waits for its reply. */
  call(request: TableRequest): TableReply {
    const seen = Atomics.load(this.control, 0);
    this.port.postMessage(request);
    while (Atomics.load(this.control, 0) === seen) Atomics.wait(this.control, 0, seen);
    const length = Atomics.load(this.control, 1);
    if (length >= 0) return deserialize(this.data.subarray(0, length)) as TableReply;
    for (;;) {
      const message = receiveMessageOnPort(this.port);
      if (message !== undefined) return message.message as TableReply;
    }
  }

  /** Sends a request whose reply nobody waits for (closing a scan). */
  tell(request: TableRequest): void {
    this.port.postMessage({ ...request, noReply: true } satisfies TableRequest);
  }
}

/** Main-thread side: writes a reply and wakes the worker. */
export function reply(port: MessagePort, shared: SharedArrayBuffer, value: TableReply): void {
  const control = new Int32Array(shared, 0, 2);
  const bytes = serialize(value);
  if (bytes.length <= REPLY_BYTES) {
    new Uint8Array(shared, CONTROL_BYTES, bytes.length).set(bytes);
    Atomics.store(control, 1, bytes.length);
  } else {
    port.postMessage(value);
    Atomics.store(control, 1, -1);
  }
  Atomics.add(control, 0, 1);
  Atomics.notify(control, 0);
}
