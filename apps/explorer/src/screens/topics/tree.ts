/**
 * The topic tree: only expanded levels are loaded and only the rows in view are in the DOM (a
 * fixed row height window over the flattened rows), so 10,000 topics stay smooth. Nodes flash on
 * activity (SSE `activity` events).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible, visibleText } from '../../visible-text.js';
import { formatHash } from '../../router.js';
import { subscribeEvents } from '../../events.js';
import { formatCount, formatRate, formatTime } from './format.js';
import { useViewportHeight } from './viewport.js';
import { applyActivity, expanded, flatten, loadLevel, loadMore, ROOT, refreshAll, setFilter, toggle, treeFilter, treeVersion, type Row } from './tree-state.js';

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

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const visible = rows.slice(first, last);

  return html`
    <section class="topic-tree card" aria-label="Topic tree">
      <div class="row tree-tools">
        <label class="grow tree-filter">
          <span class="sr-only">Filter topics</span>
          <input type="search" placeholder="Filter topics" aria-label="Filter topics" value=${filterText}
            onInput=${(event: Event) => setFilterText((event.target as HTMLInputElement).value)} />
        </label>
        <button type="button" title="Reload the tree" aria-label="Reload the tree" onClick=${() => refreshAll()}>↻</button>
      </div>
      <div class="tree-viewport" ref=${viewport} role="tree" aria-label="Topics"
        onScroll=${(event: Event) => setScrollTop((event.target as HTMLElement).scrollTop)}>
        <div class="tree-spacer" style=${{ height: `${rows.length * ROW_HEIGHT}px` }}>
          ${visible.map((row, i) => treeRow(row, first + i, props.selected, props.tab))}
        </div>
      </div>
      <div class="muted tree-foot">${rows.length.toLocaleString('en-US')} rows</div>
    </section>`;
}

function treeRow(row: Row, index: number, selected: string | null, tab: string) {
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
      data-path=${node.path} role="treeitem" aria-level=${row.depth + 1} aria-selected=${isSelected} aria-expanded=${node.hasChildren ? isOpen : undefined}>
    ${node.hasChildren
      ? html`<button type="button" class="twisty" aria-label=${`${isOpen ? 'Collapse' : 'Expand'} ${visibleText(node.path)}`} onClick=${() => toggle(node.path)}>${isOpen ? '▾' : '▸'}</button>`
      : html`<span class="twisty-space"></span>`}
    <a class=${`tree-name${node.name === '' ? ' empty-level' : ''}`} href=${hrefFor(node.path, tab)} title=${visibleText(node.path)}>${visible(label)}</a>
    <span class="tree-meta">
      <span class="tree-count" title="Messages stored">${formatCount(node.messageCount)}</span>
      <span class="tree-rate" title="Messages per second">${formatRate(node.messagesPerSecond)}</span>
      <span class="tree-last" title=${`Last message ${node.lastMessageTime ?? 'never'}`}>${formatTime(node.lastMessageTime)}</span>
    </span>
  </div>`;
}

function isExpanded(path: string): boolean {
  return expanded.has(path);
}

export function hrefFor(path: string, tab: string): string {
  return formatHash({ screen: 'topics', path: path.split('/'), query: { tab: tab === 'live' ? undefined : tab } });
}
