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
  /** Its module, relative to js/ (for the preloads of its imports). */
  module: string;
  load: () => Promise<Screen>;
}

const SCREENS: readonly ScreenEntry[] = [
  { id: 'overview', title: 'Overview', module: 'screens/overview.js', load: () => import('./screens/overview.js').then((m) => m.OverviewScreen) },
  { id: 'topics', title: 'Topics', module: 'screens/topics/index.js', load: () => import('./screens/topics/index.js').then((m) => m.TopicsScreen) },
  { id: 'clients', title: 'Clients', module: 'screens/clients.js', load: () => import('./screens/clients.js').then((m) => m.ClientsScreen) },
  { id: 'subscriptions', title: 'Subscriptions', module: 'screens/subscriptions.js', load: () => import('./screens/subscriptions.js').then((m) => m.SubscriptionsScreen) },
  { id: 'retained', title: 'Retained', module: 'screens/retained.js', load: () => import('./screens/retained.js').then((m) => m.RetainedScreen) },
  { id: 'access', title: 'Accounts', module: 'screens/access.js', load: () => import('./screens/access.js').then((m) => m.AccessScreen) },
  { id: 'tables', title: 'Tables', module: 'screens/tables.js', load: () => import('./screens/tables.js').then((m) => m.TablesScreen) },
  { id: 'console', title: 'API console', module: 'screens/console.js', load: () => import('./screens/console.js').then((m) => m.ConsoleScreen) },
];

/** Each lazy module's imports, listed by the server in index.html (plugins/explorer/module-preloads.ts). */
let lazyModules: Record<string, string[]> | undefined;
const preloaded = new Set<string>();

/** Asks for every module a screen imports at once, instead of one import level at a time. */
function preloadScreen(entry: ScreenEntry): void {
  if (lazyModules === undefined) {
    try {
      lazyModules = JSON.parse(document.getElementById('lazy-modules')?.textContent ?? '{}') as Record<string, string[]>;
    } catch {
      lazyModules = {};
    }
  }
  for (const module of lazyModules[entry.module] ?? []) {
    if (preloaded.has(module)) continue;
    preloaded.add(module);
    const link = document.createElement('link');
    link.rel = 'modulepreload';
    link.href = `./js/${module}`;
    document.head.append(link);
  }
}

function loadScreen(entry: ScreenEntry): Promise<Screen> {
  preloadScreen(entry);
  return entry.load();
}

const loaded = new Map<string, Screen>();

/** The screen's component once its modules are in (a short "Loading…" before, the first time only). */
function LazyScreen({ entry, route: current }: { entry: ScreenEntry; route: Route }) {
  const [, setLoaded] = useState(0);
  const [failure, setFailure] = useState('');
  const component = loaded.get(entry.id);
  useEffect(() => {
    if (component) return;
    let live = true;
    loadScreen(entry).then((screen) => {
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
      if (!loaded.has(entry.id)) loadScreen(entry).then((screen) => { loaded.set(entry.id, screen); }, () => undefined);
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
