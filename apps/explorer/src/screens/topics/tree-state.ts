/**
 * The topic tree's data: one browseTopics level per expanded node (paged at 500, "more" loads the
 * next page), the expanded set, the server-side filter; activity events add to the counts of the
 * loaded nodes and mark levels that miss a new topic for a (throttled) reload.
 */
import { signal } from '@preact/signals';
import { call, errorText } from '../../api.js';
import type { ActiveTopic, BrowseTopicsResult, TopicNodeSummary } from '../../../../../lib/explorer/api-types.js';

/** One node of a level, as mq.browseTopics sends it. */
export type TopicNode = TopicNodeSummary;

export interface Level {
  nodes: TopicNode[];
  /** path → node, built when activity first needs it. */
  index?: Map<string, TopicNode>;
  total: number;
  loading: boolean;
  error?: string;
}

export const PAGE = 500;
/** The key of the root level ("" is a real path: the empty first level of `/a`). */
export const ROOT = '\u0000root';

export const levels = new Map<string, Level>();
export const expanded = new Set<string>();
/** Bumped on every change of levels/expanded (one render for many changes). */
export const treeVersion = signal(0);
export const treeFilter = signal('');
/** Topics passing the filter (all topics without one): the tree's footer. */
export const treeTopics = signal<number | null>(null);
/** Topics of the root level whose message counts the server is still taking (then it is read again). */
export const treeCountsPending = signal(0);
const COUNTING_RELOAD_MS = 1000;
/** With a filter, levels holding at most this many matching topics open by themselves. */
const FILTER_OPENS_UP_TO = 200;
/** The nodes open before a filter was typed, restored when it is cleared. */
let openBeforeFilter: Set<string> | null = null;
/** The node last selected with the tree keys: not opened on selection, as a click or a link would. */
export const keyboardSelection: { path: string | null } = { path: null };

let generation = 0;
const stale = new Set<string>();
let reloadTimer: ReturnType<typeof setTimeout> | undefined;
const RELOAD_INTERVAL_MS = 2000;
const FULL_RELOAD_MS = 10_000;
const MORE_RELOAD_MS = 5000;
/** Messages a second above which the server is busy: the tree then reloads at most every 10 s
 *  (each browseTopics reads the whole catalog on the server), its counts still follow the events. */
const BUSY_RATE = 1000;
let busyUntil = 0;
let lastFullReload = Date.now();

function bump(): void {
  treeVersion.value++;
}

export function parentKey(path: string): string {
  const at = path.lastIndexOf('/');
  return at < 0 ? ROOT : path.slice(0, at);
}

export function levelsOf(path: string): string[] {
  return path.split('/');
}

async function fetchLevel(key: string, offset: number, limit: number): Promise<BrowseTopicsResult> {
  const params: Record<string, unknown> = { offset, limit };
  if (key !== ROOT) params.prefix = key;
  if (treeFilter.value) params.filter = treeFilter.value;
  return call<BrowseTopicsResult>('mq', 'browseTopics', params);
}

/** Loads a level's first page (or reloads the pages it has). */
export async function loadLevel(key: string, force = false): Promise<void> {
  const existing = levels.get(key);
  if (existing && !force && (existing.loading || existing.nodes.length > 0 || existing.total === 0)) return;
  const mine = generation;
  const limit = Math.min(5000, Math.max(PAGE, existing?.nodes.length ?? 0));
  const level: Level = existing ?? { nodes: [], total: 0, loading: true };
  level.loading = true;
  levels.set(key, level);
  bump();
  try {
    const result = await fetchLevel(key, 0, limit);
    if (mine !== generation) return;
    level.nodes = result.nodes;
    level.index = undefined;
    level.total = result.total;
    level.error = undefined;
    if (key === ROOT) {
      treeTopics.value = result.topics;
      treeCountsPending.value = result.countsPending ?? 0;
    }
    // The server counts the rest in the background: read the level again shortly.
    if (result.countsPending) {
      setTimeout(() => {
        if (mine === generation) void loadLevel(key, true);
      }, COUNTING_RELOAD_MS);
    }
    // A filter expands to its matches (when they are few enough to show).
    if (treeFilter.value && result.topics <= FILTER_OPENS_UP_TO) {
      for (const node of result.nodes) {
        if (node.hasChildren && !expanded.has(node.path)) {
          expanded.add(node.path);
          void loadLevel(node.path);
        }
      }
    }
  } catch (error) {
    if (mine !== generation) return;
    level.error = errorText(error);
  } finally {
    if (mine === generation) {
      level.loading = false;
      bump();
    }
  }
}

/** The next page of a level ("more"). */
export async function loadMore(key: string): Promise<void> {
  const level = levels.get(key);
  if (!level || level.loading) return;
  const mine = generation;
  level.loading = true;
  bump();
  try {
    const result = await fetchLevel(key, level.nodes.length, PAGE);
    if (mine !== generation) return;
    const seen = new Set(level.nodes.map((node) => node.path));
    for (const node of result.nodes) if (!seen.has(node.path)) level.nodes.push(node);
    level.index = undefined;
    level.total = result.total;
  } catch (error) {
    if (mine === generation) level.error = errorText(error);
  } finally {
    if (mine === generation) {
      level.loading = false;
      bump();
    }
  }
}

export function toggle(path: string): void {
  if (expanded.has(path)) expanded.delete(path);
  else {
    expanded.add(path);
    void loadLevel(path);
  }
  bump();
}

export function expand(path: string): void {
  if (expanded.has(path)) return;
  expanded.add(path);
  void loadLevel(path);
  bump();
}

/** Expands every ancestor of a path (a deep link), loading their levels. */
export function reveal(path: string): void {
  void loadLevel(ROOT);
  const parts = levelsOf(path);
  for (let i = 1; i < parts.length; i++) expand(parts.slice(0, i).join('/'));
}

export function setFilter(text: string): void {
  if (text === treeFilter.value) return;
  if (text && !treeFilter.value) openBeforeFilter = new Set(expanded);
  if (!text && openBeforeFilter) {
    expanded.clear();
    for (const path of openBeforeFilter) expanded.add(path);
    openBeforeFilter = null;
  }
  treeFilter.value = text;
  refreshAll();
}

/** Drops every loaded level and reloads the root and the expanded ones. */
export function refreshAll(): void {
  generation++;
  levels.clear();
  stale.clear();
  void loadLevel(ROOT);
  for (const path of expanded) void loadLevel(path);
  bump();
}

export type Row =
  | { kind: 'node'; node: TopicNode; depth: number }
  | { kind: 'more'; key: string; depth: number; loaded: number; total: number; loading: boolean }
  | { kind: 'status'; key: string; depth: number; text: string; error: boolean };

/** The visible rows: each loaded level, its expanded children below their node. */
export function flatten(): Row[] {
  const rows: Row[] = [];
  const walk = (key: string, depth: number): void => {
    const level = levels.get(key);
    if (!level || (level.loading && level.nodes.length === 0)) {
      rows.push({ kind: 'status', key, depth, text: 'Loading…', error: false });
      return;
    }
    if (level.error) rows.push({ kind: 'status', key, depth, text: level.error, error: true });
    if (level.nodes.length === 0 && !level.error) rows.push({ kind: 'status', key, depth, text: key === ROOT ? (treeFilter.value ? 'No topic matches the filter.' : 'No topics yet.') : 'Empty.', error: false });
    for (const node of level.nodes) {
      rows.push({ kind: 'node', node, depth });
      if (node.hasChildren && expanded.has(node.path)) walk(node.path, depth + 1);
    }
    if (level.nodes.length < level.total) rows.push({ kind: 'more', key, depth, loaded: level.nodes.length, total: level.total, loading: level.loading });
  };
  walk(ROOT, 0);
  return rows;
}

/** The loaded node of a path, if any. */
export function findNode(path: string): TopicNode | undefined {
  const level = levels.get(parentKey(path));
  if (!level) return undefined;
  level.index ??= new Map(level.nodes.map((candidate) => [candidate.path, candidate]));
  return level.index.get(path);
}

/**
 * Activity of one second: adds the counts to the loaded nodes on each topic's path, and marks for
 * reload each loaded level that should hold a node it does not (a new topic or a new branch).
 * Returns the paths touched (for the flash).
 */
export function applyActivity(topics: ActiveTopic[], more: number): Set<string> {
  const touched = new Set<string>();
  const filter = treeFilter.value;
  const wildcard = /[+#]/.test(filter);
  const lowered = filter.toLowerCase();
  for (const { topic, count, lastMessageTime } of topics) {
    if (filter && !(wildcard ? matchesFilter(filter, topic) : topic.toLowerCase().includes(lowered))) continue;
    const parts = levelsOf(topic);
    let key = ROOT;
    for (let i = 0; i < parts.length; i++) {
      const path = parts.slice(0, i + 1).join('/');
      const level = levels.get(key);
      if (!level) break;
      level.index ??= new Map(level.nodes.map((candidate) => [candidate.path, candidate]));
      const node = level.index.get(path);
      if (!node) {
        // Not loaded: a new node, unless the level is paged and the node may sort after the loaded part.
        if (!level.loading && (level.nodes.length >= level.total || (level.nodes.length > 0 && level.nodes[level.nodes.length - 1].name > parts[i]))) stale.add(key);
        break;
      }
      touched.add(path);
      node.messageCount += count;
      if (!node.lastMessageTime || lastMessageTime > node.lastMessageTime) node.lastMessageTime = lastMessageTime;
      if (i === parts.length - 1 && !node.isTopic) {
        node.isTopic = true;
        stale.add(key);
      }
      if (i < parts.length - 1 && !node.hasChildren) {
        node.hasChildren = true;
      }
      key = path;
    }
  }
  // Rates and counts the events do not carry (and topics left out of a busy second's event, `more`):
  // every loaded level now and then while busy.
  const since = Date.now() - lastFullReload;
  let total = 0;
  for (const { count } of topics) total += count;
  busyUntil = total + more > BUSY_RATE ? Date.now() + FULL_RELOAD_MS : busyUntil;
  if ((more > 0 && since > (Date.now() < busyUntil ? FULL_RELOAD_MS : MORE_RELOAD_MS)) || since > FULL_RELOAD_MS) {
    lastFullReload = Date.now();
    for (const key of levels.keys()) stale.add(key);
  }
  if (stale.size > 0) scheduleReload();
  if (touched.size > 0) bump();
  return touched;
}

/** An MQTT topic filter against a topic name (as the server's browseTopics matches it). */
export function matchesFilter(filter: string, topic: string): boolean {
  if (topic.startsWith('$') && (filter.startsWith('#') || filter.startsWith('+'))) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

let lastBusyReload = 0;

function scheduleReloadLater(): void {
  reloadTimer = setTimeout(() => {
    reloadTimer = undefined;
    scheduleReload();
  }, FULL_RELOAD_MS - (Date.now() - lastBusyReload));
}

/** Reloads the stale levels one after the other (each browseTopics reads the whole catalog). */
function scheduleReload(): void {
  if (reloadTimer !== undefined) return;
  reloadTimer = setTimeout(() => {
    if (Date.now() < busyUntil && Date.now() - lastBusyReload < FULL_RELOAD_MS) {
      reloadTimer = undefined;
      scheduleReloadLater();
      return;
    }
    lastBusyReload = Date.now();
    void (async () => {
      while (stale.size > 0) {
        const [key] = stale;
        stale.delete(key);
        if (levels.has(key) && (key === ROOT || expanded.has(key))) await loadLevel(key, true);
      }
    })().finally(() => { reloadTimer = undefined; });
  }, RELOAD_INTERVAL_MS);
}
