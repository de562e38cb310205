/**
 * A search box that reports its text after typing pauses (300 ms) or on Enter, and follows the
 * value it is given (a deep link, Back).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';

const PAUSE_MS = 300;

export function SearchBox({ label, value, placeholder, onSearch }: { label: string; value: string; placeholder?: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState(value);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => { setText(value); }, [value]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const submit = (next: string) => {
    clearTimeout(timer.current);
    if (next !== value) onSearch(next);
  };
  return html`
    <label class="ops-search">
      <span>${label}</span>
      <input type="search" value=${text} placeholder=${placeholder}
        onInput=${(event: Event) => {
          const next = (event.currentTarget as HTMLInputElement).value;
          setText(next);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => submit(next), PAUSE_MS);
        }}
        onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter') submit((event.currentTarget as HTMLInputElement).value); }} />
    </label>`;
}
