/** Previous / next paging over a server-side total: "51–100 of 230". Pages count from 1. */
import { html } from '../../html.js';
import { formatCount } from '../../format.js';

export function Pager({ page, pageSize, total, shown, onPage, label }: { page: number; pageSize: number; total: number; shown: number; onPage: (page: number) => void; label: string }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = (page - 1) * pageSize + shown;
  return html`
    <nav class="row ops-pager" aria-label=${label}>
      <button type="button" onClick=${() => onPage(page - 1)} disabled=${page <= 1}>Previous</button>
      <span class="muted">${total === 0 ? 'None' : `${formatCount(first)}–${formatCount(last)} of ${formatCount(total)}`}</span>
      <button type="button" onClick=${() => onPage(page + 1)} disabled=${page >= pages}>Next</button>
    </nav>`;
}

/** A positive page number from a query value (1 when absent or not a number). */
export function pageFrom(value: string | undefined): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}
