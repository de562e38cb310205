/**
 * One connection's output of one event-loop turn, copied into one Buffer and handed to the stream
 * as one chunk (when the turn ends, or sooner: see `add`). A stream write per packet cost a
 * write request object per delivery (and the stream's bookkeeping of each); here a turn of
 * deliveries to one client costs a copy of each packet and one chunk. Packets larger than
 * COPY_LIMIT are not copied: what is gathered goes first, then the packet as it is.
 *
 * The buffer is carved like Node's pool: each chunk written is a view of it, and the next turn
 * goes on after it. A connection that wrote little this turn lets it go (an idle subscriber keeps
 * no buffer); a busy one keeps it until it is full.
 */
import type { Writable } from 'node:stream';

/** Packets up to this size are copied into the turn's buffer; larger ones are written as they are. */
export const COPY_LIMIT = 2048;
/** The first buffer of a connection (a slice of Node's pool); each full one is followed by one twice its size. */
const FIRST_SIZE = 1024;
/**
 * A socket's default high-water mark: gathered bytes go to the socket about that often anyway, so a
 * larger buffer would only be memory a busy connection keeps (up to 8× what it writes a turn).
 */
const LARGEST_SIZE = 16 << 10;

export class TurnOutput {
  private buffer: Buffer | undefined = undefined;
  /** Where this turn's gathered bytes start in `buffer` (before it: chunks already written). */
  private start = 0;
  /** Where the gathered bytes end. */
  private end = 0;
  /** Bytes gathered this turn, pushed or not (whether the buffer is worth keeping). */
  private turnBytes = 0;

  /** Bytes gathered and not yet handed to the stream. */
  get length(): number {
    return this.end - this.start;
  }

  /**
   * Gathers `bytes`. The answer is the stream's write answer: false once the stream is over its
   * high-water mark. The gathered bytes are then handed to it first, so a 'drain' is sure to come.
   */
  add(stream: Writable, bytes: Buffer): boolean {
    const size = bytes.length;
    if (size > COPY_LIMIT) {
      this.push(stream);
      this.turnBytes += size;
      return stream.write(bytes);
    }
    const at = this.reserve(stream, size);
    this.buffer!.set(bytes, at);
    return this.checkMark(stream);
  }

  /**
   * Room for `size` more bytes (at most COPY_LIMIT): the offset in `bufferFor` to fill them in.
   * A full buffer is handed to the stream and followed by a larger one.
   */
  reserve(stream: Writable, size: number): number {
    let buffer = this.buffer;
    if (buffer === undefined || this.end + size > buffer.length) {
      const next = buffer === undefined ? FIRST_SIZE : Math.min(buffer.length * 2, LARGEST_SIZE);
      this.push(stream);
      buffer = this.buffer = Buffer.allocUnsafe(Math.max(next, size));
      this.start = this.end = 0;
    }
    const at = this.end;
    this.end += size;
    this.turnBytes += size;
    return at;
  }

  /** The buffer `reserve` gave room in. */
  get bufferFor(): Buffer {
    return this.buffer!;
  }

  /** After bytes were filled in by `reserve`: the stream's answer, as `add`. */
  checkMark(stream: Writable): boolean {
    if (stream.writableLength + this.length < stream.writableHighWaterMark) return true;
    return this.push(stream);
  }

  /** Hands the gathered bytes to the stream as one chunk; the stream's write answer. */
  push(stream: Writable): boolean {
    const start = this.start;
    const end = this.end;
    if (end === start) return stream.writableLength < stream.writableHighWaterMark;
    this.start = end;
    // A closed stream takes nothing (its unsent output was dropped with it).
    if (stream.destroyed) return false;
    return stream.write(this.buffer!.subarray(start, end));
  }

  /** The turn ends: what is gathered goes, and a connection that wrote little lets its buffer go. */
  endTurn(stream: Writable): void {
    this.push(stream);
    const buffer = this.buffer;
    if (buffer !== undefined && this.turnBytes * 8 < buffer.length) this.drop();
    this.turnBytes = 0;
  }

  /** Forgets the buffer and what it gathered (the connection was destroyed). */
  drop(): void {
    this.buffer = undefined;
    this.start = this.end = 0;
  }
}
