/**
 * The pretty view of a JSON payload, laid out exactly as JSON.stringify(value, null, 2), with each
 * number a button that charts it (its JSON path). Large documents stay plain text.
 */
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import { childPath } from './json-paths.js';

/** Above this many numbers the view is plain text (each button is a DOM node). */
const MAX_NUMBERS = 2000;

export function countNumbers(value: unknown, limit = MAX_NUMBERS + 1): number {
  let count = 0;
  const walk = (node: unknown): void => {
    if (count >= limit) return;
    if (typeof node === 'number') count++;
    else if (node !== null && typeof node === 'object') for (const child of Object.values(node as Record<string, unknown>)) walk(child);
  };
  walk(value);
  return count;
}

export function canLinkNumbers(value: unknown): boolean {
  return countNumbers(value) <= MAX_NUMBERS;
}

/** The parts of the pretty text: strings, and a button for each number. */
export function jsonParts(value: unknown, onChart: (path: string) => void): unknown[] {
  const parts: unknown[] = [];
  let text = '';
  const flush = (): void => {
    if (text) parts.push(visible(text));
    text = '';
  };
  const walk = (node: unknown, path: string, indent: string): void => {
    if (typeof node === 'number' && Number.isFinite(node)) {
      flush();
      const label = path === '' ? 'the payload' : path;
      parts.push(html`<button type="button" class="json-number" title=${`Chart ${label}`} data-path=${path} onClick=${() => onChart(path)}>${JSON.stringify(node)}</button>`);
      return;
    }
    if (node === null || typeof node !== 'object') {
      text += JSON.stringify(node) ?? 'null';
      return;
    }
    const inner = `${indent}  `;
    if (Array.isArray(node)) {
      if (node.length === 0) { text += '[]'; return; }
      text += '[\n';
      node.forEach((child, index) => {
        text += inner;
        walk(child, childPath(path, index), inner);
        text += index < node.length - 1 ? ',\n' : '\n';
      });
      text += `${indent}]`;
      return;
    }
    const entries = Object.entries(node as Record<string, unknown>);
    if (entries.length === 0) { text += '{}'; return; }
    text += '{\n';
    entries.forEach(([key, child], index) => {
      text += `${inner}${JSON.stringify(key)}: `;
      walk(child, childPath(path, key), inner);
      text += index < entries.length - 1 ? ',\n' : '\n';
    });
    text += `${indent}}`;
  };
  walk(value, '', '');
  flush();
  return parts;
}
