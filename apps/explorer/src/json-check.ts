/** Where JSON text fails to parse: the offset, its line and column (from 1), and the reason. */
export interface JsonProblem {
  at: number;
  line: number;
  column: number;
  reason: string;
}

export function jsonProblem(text: string): JsonProblem | null {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    const at = position ? Number(position[1]) : text.length;
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    const reason = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '');
    return { at, line, column, reason };
  }
}

/** "line L, column C: reason". */
export function problemText(problem: JsonProblem): string {
  return `line ${problem.line}, column ${problem.column}: ${problem.reason}`;
}
