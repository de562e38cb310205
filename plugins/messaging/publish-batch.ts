/**
 * Gathers the publishes of one event-loop turn into ONE `messageLog.appendEach` (one LMDB commit,
 * shared with the state writes of the same turn). The log's follower routes them once durable
 * (routing.ts); this only tells the publishers, in order, once that commit is durable. No closure
 * or promise per message: the publisher of each message is kept in a parallel array and told with
 * `stored(token, ok)`. The log takes each message on its own: one it refuses is not stored and the
 * rest of the turn is.
 */
import type { LogAppend, MessageLogPort } from '../../kernel/storage/message-log-port';
import { logTimestamp, toLogAppend, type CoreMessage } from './message';
import type { PublishOrigin } from '../../kernel/messaging/session-types';

export type { PublishOrigin } from '../../kernel/messaging/session-types';

/**
 * Messages one turn gathers before its publishers pause until the next turn. libuv reads each
 * socket up to 32 times a turn, so without it a turn of 4 busy publishers holds 20,000 messages,
 * whose one commit every ~60 ms leaves LMDB idle, then the main thread waiting (the log's
 * backlog pauses everyone). Shorter turns keep both busy: parsing overlaps the last commit.
 */
const TURN_LIMIT = 8192;

interface Turn {
  messages: CoreMessage[];
  origins: Array<PublishOrigin | null>;
  tokens: number[];
  /** Messages taken (the arrays are allocated ahead, at the last turn's size). */
  count: number;
  /** The publisher last held because the turn is full. */
  held: PublishOrigin | null;
}

export class PublishBatch<Expected> {
  private turn: Turn | null = null;
  /** Messages taken (this turn's and those handed to the log) whose commit is not durable yet. */
  backlog = 0;
  /** Waiting for the backlog to be empty (`settled`): shutdown only. */
  private idleWaiters: Array<() => void> = [];
  /** Messages of the last turn: the next turn's arrays are allocated at this size. */
  private lastTurnSize = 0;
  /** The turn's end, made once (not a closure per turn). */
  private readonly flushTurn = (): void => this.flush();

  constructor(
    private readonly log: MessageLogPort,
    private readonly now: () => number,
    /** Runs as a turn is handed to the log: the router expects these messages back from the log's follower. */
    private readonly expect: (entries: LogAppend[], messages: CoreMessage[]) => Expected,
    /** Runs once the turn is durable (and routed), with the publishers of the stored messages; null origins: it failed. */
    private readonly onSettled: (expected: Expected, origins: ReadonlyArray<PublishOrigin | null> | null) => void,
    /** Runs before the turn's append is issued (so state writes of the turn join its commit). */
    private readonly beforeFlush: () => void,
    private readonly onFailure: (error: unknown, count: number) => void,
    /** A turn is full: this publisher waits for the next turn (`onNextTurn`). */
    private readonly onTurnFull: (origin: PublishOrigin) => void,
    /** The turn was handed to the log: publishers held by a full turn may read again. */
    private readonly onNextTurn: () => void,
    /** Settling a durable turn threw (a fault, not a client's doing): logged; its publishers are still told. */
    private readonly onFault: (error: unknown) => void,
  ) {}

  add(message: CoreMessage, origin: PublishOrigin | null, token: number): void {
    let turn = this.turn;
    if (turn === null) {
      // Sized as the last turn (they are alike under steady load): no growing and copying per turn.
      const size = this.lastTurnSize;
      turn = this.turn = { messages: new Array(size), origins: new Array(size), tokens: new Array(size), count: 0, held: null };
      setImmediate(this.flushTurn);
    }
    this.backlog++;
    const at = turn.count++;
    turn.messages[at] = message;
    turn.origins[at] = origin;
    turn.tokens[at] = token;
    // Told once per run of one publisher's messages (a chunk it sent), not for each message.
    if (turn.count >= TURN_LIMIT && origin !== null && origin !== turn.held) {
      turn.held = origin;
      this.onTurnFull(origin);
    }
  }

  /** Resolves once every message taken so far is durable (or failed) and its publisher told. */
  settled(): Promise<void> {
    if (this.backlog === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** After a turn's publishers were told: wakes `settled` once nothing is left. */
  private wakeIfIdle(): void {
    if (this.backlog !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private flush(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    this.beforeFlush();
    const { messages, origins, tokens, count: n } = turn;
    // Ahead-allocated room a smaller turn did not fill is cut off (the arrays are read to their length).
    if (messages.length !== n) messages.length = origins.length = tokens.length = n;
    this.lastTurnSize = Math.min(n, TURN_LIMIT);
    const createTs = logTimestamp(this.now());
    const entries = new Array(n);
    for (let i = 0; i < n; i++) entries[i] = toLogAppend(messages[i], createTs);
    this.onNextTurn();
    const expected = this.expect(entries, messages);
    // Each entry on its own: the turn holds many clients' messages, one refused fails alone.
    this.log.appendEach(entries).then((sequences) => {
      this.backlog -= n;
      let refused = 0;
      for (let i = 0; i < n; i++) {
        const sequence = sequences[i];
        if (typeof sequence === 'number') messages[i].sequence = sequence;
        else {
          refused++;
          this.onFailure(sequence, 1);
        }
      }
      if (refused === 0) {
        this.settle(expected, origins);
        for (let i = 0; i < n; i++) tell(origins[i], tokens[i], true, messages[i]);
        this.wakeIfIdle();
        return;
      }
      const isStored = (i: number): boolean => typeof sequences[i] === 'number';
      this.settle(expected, origins.filter((_, i) => isStored(i)));
      for (let i = 0; i < n; i++) tell(origins[i], tokens[i], isStored(i), messages[i], isStored(i) ? undefined : sequences[i]);
      this.wakeIfIdle();
    }, (error: unknown) => {
      this.backlog -= n;
      this.settle(expected, null);
      this.onFailure(error, n);
      for (let i = 0; i < n; i++) tell(origins[i], tokens[i], false, messages[i], error);
      this.wakeIfIdle();
    }).catch(this.onFault);
  }

  /** Hands a settled turn to the core; a fault there still lets its publishers be told. */
  private settle(expected: Expected, origins: ReadonlyArray<PublishOrigin | null> | null): void {
    try {
      this.onSettled(expected, origins);
    } catch (error) {
      this.onFault(error);
    }
  }
}

/** Tells one publisher; a throw fails that publisher alone (no unhandled rejection, the rest are told). */
function tell(origin: PublishOrigin | null, token: number, ok: boolean, message: CoreMessage, error?: unknown): void {
  if (origin === null) return;
  try {
    origin.stored(token, ok, message, error);
  } catch (error) {
    origin.fail(error, 'acknowledging a stored PUBLISH');
  }
}
