/**
 * The shell: the login gate, the navigation bar and the current screen (router.ts). Screens are
 * components of `{ route }` in screens/; each owns its part of the hash. Each screen's modules
 * load when it is first shown (`import()`), so the first screen waits only for the shell.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { errorText, login, logOut } from './api.js';
import { route, type Route } from './router.js';
import { LoginScreen } from './screens/login.js';

export interface ScreenProps {
  route: Route;
}

type Screen = ComponentType<ScreenProps>;

interface ScreenEntry {
  id: string;
  title: string;
  load: () => Promise<Screen>;
}

const SCREENS: readonly ScreenEntry[] = [
  { id: 'overview', title: 'Overview', load: () => import('./screens/overview.js').then((m) => m.OverviewScreen) },
  { id: 'topics', title: 'Topics', load: () => import('./screens/topics/index.js').then((m) => m.TopicsScreen) },
  { id: 'clients', title: 'Clients', load: () => import('./screens/clients.js').then((m) => m.ClientsScreen) },
  { id: 'retained', title: 'Retained', load: () => import('./screens/retained.js').then((m) => m.RetainedScreen) },
  { id: 'tables', title: 'Tables', load: () => import('./screens/tables.js').then((m) => m.TablesScreen) },
  { id: 'console', title: 'API console', load: () => import('./screens/console.js').then((m) => m.ConsoleScreen) },
];

const loaded = new Map<string, Screen>();

/** The screen's component once its modules are in (a short "Loading…" before, the first time only). */
function LazyScreen({ entry, route: current }: { entry: ScreenEntry; route: Route }) {
  const [, setLoaded] = useState(0);
  const [failure, setFailure] = useState('');
  const component = loaded.get(entry.id);
  useEffect(() => {
    if (component) return;
    let live = true;
    entry.load().then((screen) => {
      loaded.set(entry.id, screen);
      if (live) setLoaded((n) => n + 1);
    }, (error: unknown) => { if (live) setFailure(errorText(error)); });
    return () => { live = false; };
  }, [entry, component]);
  if (failure) return html`<p class="error" role="alert">This screen did not load: ${failure}</p>`;
  if (!component) return html`<p class="muted">Loading…</p>`;
  return html`<${component} route=${current} />`;
}

/** Once logged in and idle, the other screens' modules are fetched, so moving between screens waits for nothing. */
let prefetched = false;
function prefetchScreens(): void {
  if (prefetched) return;
  prefetched = true;
  const later = (globalThis as { requestIdleCallback?: (callback: () => void) => void }).requestIdleCallback ?? ((callback: () => void) => setTimeout(callback, 200));
  later(() => {
    for (const entry of SCREENS) {
      if (!loaded.has(entry.id)) entry.load().then((screen) => { loaded.set(entry.id, screen); }, () => undefined);
    }
  });
}

export function App() {
  const account = login.value;
  useEffect(() => { if (account) prefetchScreens(); }, [account]);
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
      ${screen ? html`<${LazyScreen} key=${screen.id} entry=${screen} route=${current} />` : html`<p class="error">No screen "${current.screen}". <a href="#/overview">Overview</a></p>`}
    </main>`;
}
