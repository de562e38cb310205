/**
 * The topic tree: only expanded levels are loaded and only the rows in view are in the DOM (a
 * fixed row height window over the flattened rows), so 10,000 topics stay smooth. Nodes flash on
 * activity (SSE `activity` events).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { formatHash, replaceRoute } from '../../router.js';
import { subscribeEvents } from '../../events.js';
import { formatCount, formatRate, formatTime } from './format.js';
import { useViewportHeight } from './viewport.js';
import { applyActivity, expand, expanded, keyboardSelection, flatten, loadLevel, loadMore, parentKey, ROOT, refreshAll, setFilter, toggle, treeCountsPending, treeFilter, treeTopics, treeVersion, type Row } from './tree-state.js';

export const ROW_HEIGHT = 26;
const OVERSCAN = 8;

export function TopicTree(props: { selected: string | null; tab: string }) {
  const version = treeVersion.value;
  const rows = useMemo(() => flatten(), [version]);
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const height = useViewportHeight(viewport, 600);
  const [filterText, setFilterText] = useState(treeFilter.value);

  useEffect(() => { void loadLevel(ROOT); }, []);


  // Activity: counts on the loaded nodes, a flash on the rows in view.
  useEffect(() => subscribeEvents({
    activity: (data) => {
      const touched = applyActivity(data.topics, data.more);
      const element = viewport.current;
      if (!element || touched.size === 0) return;
      const hits: HTMLElement[] = [];
      for (const row of element.querySelectorAll<HTMLElement>('.tree-row[data-path]')) {
        if (touched.has(row.dataset.path!)) {
          row.classList.remove('flash');
          hits.push(row);
        }
      }
      if (hits.length === 0) return;
      void element.offsetWidth; // restart the animation
      for (const row of hits) row.classList.add('flash');
    },
  }), []);

  // Keep the selected row in view when it appears (deep links).
  const selectedIndex = props.selected === null ? -1 : rows.findIndex((row) => row.kind === 'node' && row.node.path === props.selected);
  useEffect(() => {
    const element = viewport.current;
    if (!element || selectedIndex < 0) return;
    const top = selectedIndex * ROW_HEIGHT;
    if (top < element.scrollTop || top + ROW_HEIGHT > element.scrollTop + element.clientHeight) {
      element.scrollTop = Math.max(0, top - element.clientHeight / 3);
    }
  }, [selectedIndex]);

  useEffect(() => {
    const timer = setTimeout(() => setFilter(filterText.trim()), 250);
    return () => clearTimeout(timer);
  }, [filterText]);

  // The row the keys moved to gets the focus once it is rendered (it may first need a scroll).
  const focusPath = useRef<string | null>(null);
  useEffect(() => {
    const path = focusPath.current;
    const element = viewport.current;
    if (path === null || !element) return;
    for (const row of element.querySelectorAll<HTMLElement>('.tree-row[data-path]')) {
      if (row.dataset.path === path) {
        row.focus({ preventScroll: true });
        focusPath.current = null;
        return;
      }
    }
  });

  const onKeyDown = (event: KeyboardEvent): void => {
    const item = (event.target as HTMLElement).closest<HTMLElement>('.tree-row[data-path]');
    if (!item || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = treeKeyTarget(rows, item.dataset.path!, event.key);
    if (target === undefined) return;
    event.preventDefault();
    if (target === null) return;
    focusPath.current = target;
    keyboardSelection.path = target;
    replaceRoute({ screen: 'topics', path: target.split('/'), query: { tab: props.tab === 'live' ? undefined : props.tab } });
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const visible = rows.slice(first, last);

  return html`
    <section class="topic-tree card" aria-label="Topic tree">
      <div class="row tree-tools">
        <label class="grow tree-filter">
          <span class="sr-only">Filter topics</span>
          <input type="search" placeholder="Filter: text, or a filter with + and #" aria-label="Filter topics" value=${filterText}
            onInput=${(event: Event) => setFilterText((event.target as HTMLInputElement).value)} />
        </label>
        <button type="button" title="Reload the tree" aria-label="Reload the tree" onClick=${() => refreshAll()}>↻</button>
      </div>
      <div class="tree-viewport" ref=${viewport} role="tree" aria-label="Topics" onKeyDown=${onKeyDown}
        onScroll=${(event: Event) => setScrollTop((event.target as HTMLElement).scrollTop)}>
        <div class="tree-spacer" style=${{ height: `${rows.length * ROW_HEIGHT}px` }}>
          ${visible.map((row, i) => treeRow(row, first + i, props.selected, props.tab, props.selected === null && first + i === 0))}
        </div>
      </div>
      <div class="muted tree-foot" aria-live="polite">${footText(treeTopics.value, treeFilter.value)}${treeCountsPending.value > 0 ? ` · counting the messages of ${treeCountsPending.value.toLocaleString('en-US')} topics…` : ''}</div>
    </section>`;
}

/**
 * The tree keys (WAI-ARIA tree pattern): ↑/↓ the row above or below, → opens a node or goes to its
 * first child, ← closes it or goes to its parent, Home/End the first or last row. Answers the path
 * to select, null when the key was used without moving, undefined for other keys.
 */
function treeKeyTarget(rows: Row[], path: string, key: string): string | null | undefined {
  const index = rows.findIndex((row) => row.kind === 'node' && row.node.path === path);
  if (index < 0) return undefined;
  const row = rows[index] as Extract<Row, { kind: 'node' }>;
  const nodeAt = (from: number, step: 1 | -1): string | null => {
    for (let at = from; at >= 0 && at < rows.length; at += step) {
      const candidate = rows[at];
      if (candidate.kind === 'node') return candidate.node.path;
    }
    return null;
  };
  switch (key) {
    case 'ArrowDown': return nodeAt(index + 1, 1);
    case 'ArrowUp': return nodeAt(index - 1, -1);
    case 'Home': return nodeAt(0, 1);
    case 'End': return nodeAt(rows.length - 1, -1);
    case 'ArrowRight':
      if (!row.node.hasChildren) return null;
      if (!expanded.has(path)) {
        expand(path);
        return null;
      }
      return rows[index + 1]?.kind === 'node' && rows[index + 1].depth > row.depth ? nodeAt(index + 1, 1) : null;
    case 'ArrowLeft':
      if (row.node.hasChildren && expanded.has(path)) {
        toggle(path);
        return null;
      }
      return parentKey(path) === ROOT ? null : parentKey(path);
    default: return undefined;
  }
}

function treeRow(row: Row, index: number, selected: string | null, tab: string, firstStop: boolean) {
  const style = { top: `${index * ROW_HEIGHT}px`, height: `${ROW_HEIGHT}px`, paddingLeft: `${6 + row.depth * 16}px` };
  if (row.kind === 'status') {
    return html`<div key=${`s:${row.key}`} class=${`tree-row tree-status ${row.error ? 'error' : 'muted'}`} style=${style} role=${row.error ? 'alert' : undefined}>${row.text}</div>`;
  }
  if (row.kind === 'more') {
    return html`<div key=${`m:${row.key}`} class="tree-row tree-more" style=${style}>
      <button type="button" class="link" disabled=${row.loading} onClick=${() => { void loadMore(row.key); }}>
        ${row.loading ? 'Loading…' : `more (${formatCount(row.total - row.loaded)} of ${formatCount(row.total)} not shown)`}
      </button>
    </div>`;
  }
  const { node } = row;
  const isOpen = node.hasChildren && isExpanded(node.path);
  const isSelected = node.path === selected;
  const label = node.name === '' ? '(empty)' : node.name;
  return html`<div key=${`n:${node.path}`} class=${`tree-row${isSelected ? ' selected' : ''}${node.isTopic ? ' is-topic' : ''}`} style=${style}
      data-path=${node.path} role="treeitem" aria-level=${row.depth + 1} aria-selected=${isSelected} aria-expanded=${node.hasChildren ? isOpen : undefined}
      aria-label=${visibleText(label)} tabindex=${isSelected || firstStop ? 0 : -1}>
    ${node.hasChildren
      ? html`<button type="button" class="twisty" tabindex="-1" aria-label=${`${isOpen ? 'Collapse' : 'Expand'} ${visibleText(node.path)}`} onClick=${() => toggle(node.path)}>${isOpen ? '▾' : '▸'}</button>`
      : html`<span class="twisty-space"></span>`}
    <a class=${`tree-name${node.name === '' ? ' empty-level' : ''}`} tabindex="-1" href=${hrefFor(node.path, tab)} title=${visibleText(node.path)}>${visible(label)}</a>
    ${node.retained && html`<span class="tree-retained" title="Holds a retained message">R</span>`}
    ${node.preview !== undefined && html`<span class="tree-preview mono" title=${visibleText(node.preview)}>${visible(node.preview)}</span>`}
    <span class="tree-meta">
      <span class="tree-count" title="Messages stored">${formatCount(node.messageCount)}</span>
      <span class="tree-rate" title="Messages per second">${formatRate(node.messagesPerSecond)}</span>
      <span class="tree-last" title=${`Last message ${node.lastMessageTime ?? 'never'}`}>${formatTime(node.lastMessageTime)}</span>
    </span>
  </div>`;
}

function footText(topics: number | null, filter: string): string {
  if (topics === null) return '';
  const count = `${topics.toLocaleString('en-US')} ${topics === 1 ? 'topic' : 'topics'}`;
  return filter ? `${count} match ${filter}` : count;
}

function isExpanded(path: string): boolean {
  return expanded.has(path);
}

export function hrefFor(path: string, tab: string): string {
  return formatHash({ screen: 'topics', path: path.split('/'), query: { tab: tab === 'live' ? undefined : tab } });
}
