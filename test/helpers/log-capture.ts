/** A pino logger that keeps its entries in memory, for tests that check what the server logged. */
import pino, { type Logger } from 'pino';

export interface CapturedLog {
  logger: Logger;
  /** Every entry so far, parsed. */
  entries(): Array<Record<string, any>>;
  /** The raw text of every entry so far. */
  text(): string;
}

export function captureLog(level: pino.Level = 'info'): CapturedLog {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (line: string) => { lines.push(line); } });
  return {
    logger,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, any>),
    text: () => lines.join(''),
  };
}
