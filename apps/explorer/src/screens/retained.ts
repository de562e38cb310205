/**
 * Retained messages: `#/retained?filter=…&page=…` lists them by topic filter (paged on the
 * server), `#/retained/<topic levels>?filter=…` shows one (payload pretty or raw, properties).
 * Deleting one uses its exact topic as the filter; deleting by filter shows the count first.
 */
import { html } from '../html.js';
import type { ScreenProps } from '../app.js';
import { RetainedList } from './retained/list.js';
import { RetainedView } from './retained/view.js';

export function RetainedScreen({ route }: ScreenProps) {
  const filter = route.query.filter || '#';
  if (route.path.length === 0) return html`<${RetainedList} filter=${filter} query=${route.query} />`;
  const topic = route.path.join('/');
  return html`<${RetainedView} key=${topic} topic=${topic} filter=${filter} />`;
}
