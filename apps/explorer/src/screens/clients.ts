/**
 * Clients: MQTT and MQ API sessions. `#/clients?filter=…&page=…` lists them (paged on the server),
 * `#/clients/<clientName>` shows one (clients/detail.ts).
 */
import { html } from '../html.js';
import type { ScreenProps } from '../app.js';
import { ClientList } from './clients/list.js';
import { ClientDetail } from './clients/detail.js';

export function ClientsScreen({ route }: ScreenProps) {
  const clientName = route.path.length > 0 ? route.path.join('/') : null;
  return clientName === null
    ? html`<${ClientList} query=${route.query} />`
    : html`<${ClientDetail} key=${clientName} clientName=${clientName} />`;
}
