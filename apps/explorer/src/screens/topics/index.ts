/**
 * The Topics screen (MQ Explorer): the topic tree on the left; for the selected node the Live,
 * History, Chart, Info and Publish tabs; a message's detail over them. Deep links:
 * `#/topics/<topic levels>?tab=live|history|chart|info|publish&page=N&msg=<id>`.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { visible } from '../../visible-text.js';
import type { ScreenProps } from '../../app.js';
import { formatHash, navigate, setQuery } from '../../router.js';
import { ChartTab } from './chart.js';
import type { TopicMessage } from './format.js';
import { HistoryTab } from './history.js';
import { InfoTab } from './info.js';
import { LiveTab } from './live.js';
import { MessageDetail } from './message.js';
import { PublishTab } from './publish.js';
import { Splitter, useDetailWidth } from './split.js';
import { TopicTree } from './tree.js';
import { expand, findNode, keyboardSelection, levels, loadMore, parentKey, reveal, treeVersion } from './tree-state.js';

const TABS = [
  { id: 'live', title: 'Live' },
  { id: 'history', title: 'History' },
  { id: 'chart', title: 'Chart' },
  { id: 'info', title: 'Info' },
  { id: 'publish', title: 'Publish' },
] as const;
type TabId = typeof TABS[number]['id'];

export function TopicsScreen({ route }: ScreenProps) {
  const selected = route.path.length > 0 ? route.path.join('/') : null;
  const tab: TabId = (TABS.find((candidate) => candidate.id === route.query.tab)?.id) ?? 'live';
  const msgId = route.query.msg !== undefined && /^\d+$/.test(route.query.msg) ? Number(route.query.msg) : undefined;
  const [liveDetail, setLiveDetail] = useState<{ message: TopicMessage; previous: TopicMessage | null } | null>(null);
  const autoExpanded = useRef<string | null>(null);

  useEffect(() => {
    if (selected !== null) reveal(selected);
    setLiveDetail(null);
  }, [selected]);

  // A selected node with children opens once (the user may close it again).
  const version = treeVersion.value;
  useEffect(() => {
    if (selected === null || autoExpanded.current === selected) return;
    const node = findNode(selected);
    if (!node) {
      // A deep link past the loaded page of its level: load the next pages until it is there.
      const level = levels.get(parentKey(selected));
      const name = selected.slice(selected.lastIndexOf('/') + 1);
      if (level && !level.loading && !level.error && level.nodes.length < level.total && level.nodes.length > 0 && level.nodes[level.nodes.length - 1].name < name) void loadMore(parentKey(selected));
      return;
    }
    autoExpanded.current = selected;
    if (node.hasChildren && keyboardSelection.path !== selected) expand(selected);
  }, [selected, version]);

  useEffect(() => { if (tab !== 'live') setLiveDetail(null); }, [tab]);

  const openStored = (message: TopicMessage): void => setQuery({ msg: message.id });
  const closeDetail = (): void => {
    setLiveDetail(null);
    if (msgId !== undefined) setQuery({ msg: undefined });
  };
  const detailOpen = msgId !== undefined || liveDetail !== null;
  const [detailWidth, setDetailWidth] = useDetailWidth();
  const close = useRef(closeDetail);
  close.current = closeDetail;
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target as HTMLElement;
      if (target.closest('input, textarea, select, [contenteditable], .topic-tree, [role="separator"]')) return;
      if (!detailOpen && !target.closest('.message-row')) return;
      if (event.key === 'Escape' && detailOpen) {
        event.preventDefault();
        close.current();
        return;
      }
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        if (stepMessage(target, event.key === 'ArrowDown' ? 1 : -1)) event.preventDefault();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [detailOpen]);

  const chart = (topic: string, path: string): void => {
    setLiveDetail(null);
    navigate({ screen: 'topics', path: topic.split('/'), query: { tab: 'chart', field: path || undefined } });
  };
  const republish = (draft: { topic: string }): void => {
    setLiveDetail(null);
    navigate({ screen: 'topics', path: draft.topic.split('/'), query: { tab: 'publish' } });
  };

  return html`
    <div class="topics-screen">
      <${TopicTree} selected=${selected} tab=${tab} />
      <section class="topic-pane card" aria-label="Selected topic">
        ${selected === null ? html`
          <div class="topic-empty">
            <h2>Topics</h2>
            <p class="muted">Pick a topic or a branch in the tree: its live traffic, stored history, a chart of its numbers, its details, or publish to it.</p>
            <p class="muted">Nodes flash when messages arrive; counts include everything below a node.</p>
          </div>`
        : html`
          <${Breadcrumb} path=${selected} tab=${tab} />
          <nav class="tabs" role="tablist" aria-label="Topic views">
            ${TABS.map((candidate) => html`<a role="tab" href=${formatHash({ screen: 'topics', path: route.path, query: { tab: candidate.id === 'live' ? undefined : candidate.id } })}
              class=${candidate.id === tab ? 'active' : ''} aria-selected=${candidate.id === tab}>${candidate.title}</a>`)}
          </nav>
          <div class=${`topic-body${detailOpen ? ' with-detail' : ''}`} style=${detailOpen ? `--detail-width:${detailWidth}px` : undefined}>
            <div class="topic-tab">
              ${tab === 'live' && html`<${LiveTab} path=${selected} selectedKey=${liveDetail?.message.key} onOpen=${(message: TopicMessage, previous: TopicMessage | null) => setLiveDetail({ message, previous })} />`}
              ${tab === 'history' && html`<${HistoryTab} topic=${selected} query=${route.query} selectedId=${msgId} onOpen=${openStored} />`}
              ${tab === 'chart' && html`<${ChartTab} topic=${selected} query=${route.query} />`}
              ${tab === 'info' && html`<${InfoTab} topic=${selected} />`}
              ${tab === 'publish' && html`<${PublishTab} topic=${selected} />`}
            </div>
            ${detailOpen && html`<${Splitter} width=${detailWidth} onResize=${setDetailWidth} />`}
            ${msgId !== undefined && !liveDetail && html`<${MessageDetail} topic=${selected} id=${msgId} onClose=${closeDetail} onRepublish=${republish} onChart=${chart} />`}
            ${liveDetail && html`<${MessageDetail} topic=${liveDetail.message.topic} message=${liveDetail.message} previous=${liveDetail.previous} onClose=${closeDetail} onRepublish=${republish} onChart=${chart} />`}
          </div>`}
      </section>
    </div>`;
}

/**
 * ↑/↓: opens the message above or below the selected (or focused) row of the tab, as a click
 * would, and moves the focus there. Answers whether there was one.
 */
function stepMessage(target: HTMLElement, step: 1 | -1): boolean {
  const rows = [...document.querySelectorAll<HTMLElement>('.topic-tab .message-row')];
  const focused = target.closest<HTMLElement>('.message-row');
  const current = focused ?? rows.find((row) => row.classList.contains('selected'));
  const at = current ? rows.indexOf(current) : -1;
  const next = rows[at < 0 ? 0 : at + step];
  if (!next) return false;
  next.click();
  next.focus({ preventScroll: true });
  next.scrollIntoView({ block: 'nearest' });
  return true;
}

function Breadcrumb(props: { path: string; tab: string }) {
  const parts = props.path.split('/');
  return html`
    <h2 class="breadcrumb" aria-label="Topic path">
      ${parts.map((part, i) => html`${i > 0 ? html`<span class="sep">/</span>` : ''}${i === parts.length - 1
        ? html`<span class="current mono">${part === '' ? '(empty)' : visible(part)}</span>`
        : html`<a class="mono" href=${formatHash({ screen: 'topics', path: parts.slice(0, i + 1), query: { tab: props.tab === 'live' ? undefined : props.tab } })}>${part === '' ? '(empty)' : visible(part)}</a>`}`)}
    </h2>`;
}
