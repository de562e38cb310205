/**
 * Gathers the publishes of one event-loop turn into ONE `messageLog.append` (one LMDB commit,
 * shared with the state writes of the same turn), and hands them back, stored, in order, once
 * that commit is durable. No closure or promise per message: the publisher of each message is
 * kept in a parallel array and told with `stored(token, ok)`.
 */
import type { MessageLogPort } from '../../kernel/storage/message-log-port';
import { logTimestamp, toLogAppend, type CoreMessage } from './message';

/** Who is told when a message is durable (an MQTT connection acknowledging a packet id). */
export interface PublishOrigin {
  /**
   * false when pausing it would stop its own acknowledgements (it has messages in flight to it):
   * a client that publishes and subscribes is never paused for the subscribers it feeds.
   */
  mayPause(): boolean;
  /** Stop reading publishes (a target lags, or the log's backlog is high) until resumed. */
  pausePublishing(): void;
  resumePublishing(): void;
  /** `ok`: stored; else the commit failed and nothing of it was stored. */
  stored(token: number, ok: boolean, message: CoreMessage): void;
}

interface Turn {
  messages: CoreMessage[];
  origins: Array<PublishOrigin | null>;
  tokens: number[];
}

export class PublishBatch {
  private turn: Turn | null = null;
  /** Messages taken (this turn's and those handed to the log) whose commit is not durable yet. */
  backlog = 0;

  constructor(
    private readonly log: MessageLogPort,
    private readonly now: () => number,
    /** Runs, in log order, with each turn's messages once durable (sequence set), and who published them. */
    private readonly onDurable: (messages: CoreMessage[], origins: ReadonlyArray<PublishOrigin | null>) => void,
    /** Runs before the turn's append is issued (so state writes of the turn join its commit). */
    private readonly beforeFlush: () => void,
    private readonly onFailure: (error: unknown, count: number) => void,
  ) {}

  add(message: CoreMessage, origin: PublishOrigin | null, token: number): void {
    let turn = this.turn;
    if (turn === null) {
      turn = this.turn = { messages: [], origins: [], tokens: [] };
      setImmediate(() => this.flush());
    }
    this.backlog++;
    turn.messages.push(message);
    turn.origins.push(origin);
    turn.tokens.push(token);
  }

  private flush(): void {
    const turn = this.turn;
    this.turn = null;
    if (turn === null) return;
    this.beforeFlush();
    const { messages, origins, tokens } = turn;
    const n = messages.length;
    const createTs = logTimestamp(this.now());
    const entries = new Array(n);
    for (let i = 0; i < n; i++) entries[i] = toLogAppend(messages[i], createTs);
    this.log.append(entries).then((sequences) => {
      this.backlog -= n;
      for (let i = 0; i < n; i++) messages[i].sequence = sequences[i];
      this.onDurable(messages, origins);
      for (let i = 0; i < n; i++) origins[i]?.stored(tokens[i], true, messages[i]);
    }, (error: unknown) => {
      this.backlog -= n;
      this.onFailure(error, n);
      for (let i = 0; i < n; i++) origins[i]?.stored(tokens[i], false, messages[i]);
    });
  }
}
