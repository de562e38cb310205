/**
 * A blocking call from a worker thread to the main thread. SQLite calls virtual tables
 * synchronously, and this is how those calls reach the engine's tables without SQLite ever
 * running on the main thread.
 *
 * The worker posts a request on its port and sleeps on a shared word (Atomics.wait). The main
 * thread writes the reply into a shared buffer, then bumps the word and wakes the worker, which
 * reads the reply from the buffer at once. A reply is either a row batch (row-batch.ts: a scan's
 * rows, written there directly) or any other reply in v8 serialization. A reply larger than the
 * buffer goes on the port instead (the kind word says so) and is taken off it synchronously
 * (receiveMessageOnPort): a message may reach the port a moment after the wake-up, so the shared
 * buffer is the usual path.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { deserialize, serialize } from 'node:v8';
import type { TableReply, TableRequest } from './sql-protocol';
import { RowBatchWriter } from './row-batch';

/** Bytes of the shared reply buffer of one worker. */
export const REPLY_BYTES = 4 * 1024 * 1024;
/** Control words: [0] replies sent, [1] length of the reply in the buffer, [2] its kind (below). */
const CONTROL_BYTES = 16;
/** A TableReply in v8 serialization. */
const KIND_SERIALIZED = 0;
/** A row batch: the reply is `{ ok: true, value: <the batch's bytes> }`. */
const KIND_BATCH = 1;
/** The reply is on the port. */
const KIND_PORT = 2;

export function replyBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(CONTROL_BYTES + REPLY_BYTES);
}

export class SyncCaller {
  private readonly control: Int32Array;
  private readonly data: Buffer;

  constructor(private readonly port: MessagePort, shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, 3);
    this.data = Buffer.from(shared, CONTROL_BYTES, REPLY_BYTES);
  }

  /**
   * Sends a request and waits for its reply. A row batch's bytes are a view of the shared
   * buffer: valid until the next call.
   */
  call(request: TableRequest): TableReply {
    const seen = Atomics.load(this.control, 0);
    this.port.postMessage(request);
    while (Atomics.load(this.control, 0) === seen) Atomics.wait(this.control, 0, seen);
    const kind = Atomics.load(this.control, 2);
    const length = Atomics.load(this.control, 1);
    if (kind === KIND_BATCH) return { ok: true, value: this.data.subarray(0, length) };
    if (kind === KIND_SERIALIZED) return deserialize(this.data.subarray(0, length)) as TableReply;
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

/** Main-thread side of one worker's calls: writes a reply and wakes the worker. */
export class SyncReplier {
  private readonly control: Int32Array;
  private readonly data: Uint8Array;
  /** Writes a row batch straight into the shared buffer (then `sendBatch`). */
  readonly batches: RowBatchWriter;

  constructor(private readonly port: MessagePort, shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, 3);
    this.data = new Uint8Array(shared, CONTROL_BYTES, REPLY_BYTES);
    this.batches = new RowBatchWriter(this.data);
  }

  /** Any reply. */
  reply(value: TableReply): void {
    const bytes = serialize(value);
    if (bytes.length <= REPLY_BYTES) {
      this.data.set(bytes);
      this.wake(KIND_SERIALIZED, bytes.length);
    } else {
      this.port.postMessage(value);
      this.wake(KIND_PORT, 0);
    }
  }

  /** A row batch `batches` has written (its length in bytes). */
  sendBatch(length: number): void {
    this.wake(KIND_BATCH, length);
  }

  /** A row batch written elsewhere (larger than the shared buffer): it goes on the port. */
  sendLargeBatch(bytes: Uint8Array): void {
    this.port.postMessage({ ok: true, value: bytes } satisfies TableReply, [bytes.buffer as ArrayBuffer]);
    this.wake(KIND_PORT, 0);
  }

  private wake(kind: number, length: number): void {
    Atomics.store(this.control, 2, kind);
    Atomics.store(this.control, 1, length);
    Atomics.add(this.control, 0, 1);
    Atomics.notify(this.control, 0);
  }
}
