/**
 * The shell: the login gate, the navigation bar and the current screen (router.ts). Screens are
 * components of `{ route }` in screens/; each owns its part of the hash.
 */
import type { ComponentType } from 'preact';
import { html } from './html.js';
import { login, logOut } from './api.js';
import { route, type Route } from './router.js';
import { LoginScreen } from './screens/login.js';
import { OverviewScreen } from './screens/overview.js';
import { TopicsScreen } from './screens/topics/index.js';
import { ClientsScreen } from './screens/clients.js';
import { RetainedScreen } from './screens/retained.js';
import { TablesScreen } from './screens/tables.js';
import { ConsoleScreen } from './screens/console.js';

export interface ScreenProps {
  route: Route;
}

const SCREENS: ReadonlyArray<{ id: string; title: string; component: ComponentType<ScreenProps> }> = [
  { id: 'overview', title: 'Overview', component: OverviewScreen },
  { id: 'topics', title: 'Topics', component: TopicsScreen },
  { id: 'clients', title: 'Clients', component: ClientsScreen },
  { id: 'retained', title: 'Retained', component: RetainedScreen },
  { id: 'tables', title: 'Tables', component: TablesScreen },
  { id: 'console', title: 'API console', component: ConsoleScreen },
];

export function App() {
  const account = login.value;
  if (!account) return html`<${LoginScreen} />`;
  const current = route.value;
  const screen = SCREENS.find((candidate) => candidate.id === current.screen);
  return html`
    <header class="topbar">
      <a class="brand" href="/">engine</a>
      <nav aria-label="Screens">
        ${SCREENS.map((s) => html`<a href=${`#/${s.id}`} class=${s.id === current.screen ? 'active' : ''} aria-current=${s.id === current.screen ? 'page' : undefined}>${s.title}</a>`)}
      </nav>
      <span class="account" title="Logged in account">${account.account}</span>
      <button type="button" class="logout" onClick=${() => { void logOut(); }}>Log out</button>
    </header>
    <main class="screen" data-screen=${current.screen}>
      ${screen ? html`<${screen.component} route=${current} />` : html`<p class="error">No screen "${current.screen}". <a href="#/overview">Overview</a></p>`}
    </main>`;
}
