/**
 * Deep links in the URL hash: `#/<screen>/<path segments>?<query>`, e.g.
 * `#/topics/a/b?tab=history&page=3`. Each path segment is URI-encoded, so a topic level may hold
 * any character; an empty level (a topic `/a`) is an empty segment.
 */
import { signal } from '@preact/signals';

export interface Route {
  screen: string;
  /** Decoded path segments after the screen. */
  path: string[];
  query: Record<string, string>;
}

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = splitOnce(text, '?');
  const segments = pathPart === '' ? [] : pathPart.split('/').map(safeDecode);
  const query: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(queryPart)) query[key] = value;
  return { screen: segments[0] || 'overview', path: segments.slice(1), query };
}

export function formatHash(route: { screen: string; path?: string[]; query?: Record<string, string | number | undefined> }): string {
  let hash = `#/${route.screen}`;
  if (route.path && route.path.length > 0) hash += `/${route.path.map(encodeURIComponent).join('/')}`;
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(route.query ?? {})) if (value !== undefined && value !== '') query.set(key, String(value));
  const text = query.toString();
  return text ? `${hash}?${text}` : hash;
}

export const route = signal<Route>(parseHash(location.hash));
addEventListener('hashchange', () => { route.value = parseHash(location.hash); });

/** Moves to a route (a new history entry). */
export function navigate(to: Parameters<typeof formatHash>[0]): void {
  const hash = formatHash(to);
  if (hash !== location.hash) location.hash = hash;
}

/** Changes the query of the current route in place (no new history entry), e.g. a page number. */
export function setQuery(changes: Record<string, string | number | undefined>): void {
  const current = route.value;
  const query: Record<string, string | number | undefined> = { ...current.query, ...changes };
  const hash = formatHash({ screen: current.screen, path: current.path, query });
  history.replaceState(null, '', hash);
  route.value = parseHash(hash);
}

/** Moves to a route in place (no new history entry), e.g. stepping through the tree with the keys. */
export function replaceRoute(to: Parameters<typeof formatHash>[0]): void {
  const hash = formatHash(to);
  if (hash === location.hash) return;
  history.replaceState(null, '', hash);
  route.value = parseHash(hash);
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator);
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
