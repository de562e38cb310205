/** Placeholder: replaced by the screen's owner. */
import { html } from '../html.js';
import type { ScreenProps } from '../app.js';

export function OverviewScreen(_props: ScreenProps) {
  return html`<p>Coming.</p>`;
}
