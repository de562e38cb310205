/**
 * Tables (the Data Explorer): databases and their tables → a table's records (paged on the
 * server in index order, index ranges, insert/edit/delete, export) and its fields and indexes.
 * Deep links: `#/tables/<database>/<table>?tab=structure|records&index=..&page=..&from=..&to=..`.
 * Integration tables (a topic's messages) are read-only: no write buttons.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { errorText } from '../api.js';
import { formatHash, setQuery } from '../router.js';
import type { ScreenProps } from '../app.js';
import { describeTable, ensureStylesheet, type TableInfo } from './tables/data.js';
import { TableList } from './tables/list.js';
import { TableRecords } from './tables/records.js';
import { TableStructure } from './tables/structure.js';

const DEFAULT_DATABASE = 'main';

export function TablesScreen(props: ScreenProps) {
  useEffect(() => ensureStylesheet('data.css'), []);
  const [database = DEFAULT_DATABASE, table] = props.route.path;
  return html`
    <div class="tables-screen">
      <${TableList} database=${database} table=${table} />
      <section class="tables-main" aria-label=${table ? `Table ${table}` : `Database ${database}`}>
        ${table
          ? html`<${TableView} key=${`${database}/${table}`} database=${database} table=${table} query=${props.route.query} />`
          : html`<div class="card"><h2>Database ${database}</h2><p class="muted">Pick a table to see its records, fields and indexes.</p></div>`}
      </section>
    </div>`;
}

function TableView(props: { database: string; table: string; query: Record<string, string> }) {
  const [info, setInfo] = useState<TableInfo | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    const abort = new AbortController();
    setInfo(null);
    setError('');
    describeTable(props.database, props.table, abort.signal)
      .then(setInfo)
      .catch((failure) => { if (!abort.signal.aborted) setError(errorText(failure)); });
    return () => abort.abort();
  }, [props.database, props.table]);

  const tab = props.query.tab === 'structure' ? 'structure' : 'records';
  return html`
    <header class="table-head">
      <h2>${props.table} <span class="muted small">in ${props.database}</span></h2>
      ${info?.integrationTable && html`
        <p class="notice read-only" role="note">
          Integration table of topic <a href=${formatHash({ screen: 'topics', path: (info.topic ?? '').split('/') })}><code>${info.topic}</code></a>: read-only (messages are written by publishing).
        </p>`}
    </header>
    <div class="tabs" role="tablist" aria-label="Table views">
      <button type="button" role="tab" aria-selected=${tab === 'records'} class=${tab === 'records' ? 'active' : ''} onClick=${() => setQuery({ tab: undefined })}>Records</button>
      <button type="button" role="tab" aria-selected=${tab === 'structure'} class=${tab === 'structure' ? 'active' : ''} onClick=${() => setQuery({ tab: 'structure' })}>Fields and indexes</button>
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!info && !error && html`<p class="muted">Loading…</p>`}
    ${info && (tab === 'structure'
      ? html`<${TableStructure} info=${info} />`
      : html`<${TableRecords} info=${info} query=${props.query} readOnly=${info.integrationTable} />`)}`;
}
