/**
 * A line diff (longest common subsequence) of two texts, for a message against the previous one
 * of its topic; a removed line followed by an added line that differs only in its numbers is
 * paired, and the changed numbers are marked with their difference.
 */

export type DiffLine =
  | { kind: 'same'; text: string }
  | { kind: 'removed' | 'added'; text: string; numbers?: NumberChange[] };

/** A changed number inside a paired line: its character range in the line and the delta. */
export interface NumberChange {
  start: number;
  end: number;
  delta: number;
}

const MAX_CELLS = 4_000_000;

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // Common head and tail first: most payload changes are small.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: 'same', text }));
  if (midA.length * midB.length > MAX_CELLS) {
    for (const text of midA) out.push({ kind: 'removed', text });
    for (const text of midB) out.push({ kind: 'added', text });
  } else {
    out.push(...lcsDiff(midA, midB));
  }
  for (const text of a.slice(a.length - tail)) out.push({ kind: 'same', text });
  markNumbers(out);
  return out;
}

function lcsDiff(a: string[], b: string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1] + 1 : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] });
      i++;
      j++;
    } else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) {
      out.push({ kind: 'removed', text: a[i++] });
    } else {
      out.push({ kind: 'added', text: b[j++] });
    }
  }
  while (i < n) out.push({ kind: 'removed', text: a[i++] });
  while (j < m) out.push({ kind: 'added', text: b[j++] });
  return out;
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

function numbersOf(text: string): Array<{ start: number; end: number; value: number }> {
  const found: Array<{ start: number; end: number; value: number }> = [];
  for (const match of text.matchAll(NUMBER)) found.push({ start: match.index!, end: match.index! + match[0].length, value: Number(match[0]) });
  return found;
}

/** Pairs each run of removed lines with the following run of added lines, line by line. */
function markNumbers(lines: DiffLine[]): void {
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== 'removed') { i++; continue; }
    const removedStart = i;
    while (i < lines.length && lines[i].kind === 'removed') i++;
    const addedStart = i;
    while (i < lines.length && lines[i].kind === 'added') i++;
    const pairs = Math.min(addedStart - removedStart, i - addedStart);
    for (let k = 0; k < pairs; k++) {
      const removed = lines[removedStart + k] as Extract<DiffLine, { kind: 'removed' | 'added' }>;
      const added = lines[addedStart + k] as Extract<DiffLine, { kind: 'removed' | 'added' }>;
      if (removed.text.replace(NUMBER, '#') !== added.text.replace(NUMBER, '#')) continue;
      const before = numbersOf(removed.text);
      const after = numbersOf(added.text);
      removed.numbers = [];
      added.numbers = [];
      for (let n = 0; n < before.length; n++) {
        if (before[n].value === after[n].value) continue;
        const delta = after[n].value - before[n].value;
        removed.numbers.push({ start: before[n].start, end: before[n].end, delta });
        added.numbers.push({ start: after[n].start, end: after[n].end, delta });
      }
    }
  }
}

export function formatDelta(delta: number): string {
  const rounded = Math.abs(delta) < 1e-9 ? 0 : Number(delta.toPrecision(12));
  return `${rounded > 0 ? '+' : ''}${rounded}`;
}
