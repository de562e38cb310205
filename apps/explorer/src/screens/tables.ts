/**
 * Tables (the Data Explorer): databases and their tables → a table's records (paged on the
 * server in index order, index ranges, insert/edit/delete, export) and its fields and indexes.
 * Deep links: `#/tables/<database>/<table>?tab=structure|records&index=..&page=..&from=..&to=..`.
 * Integration tables (a topic's messages) are read-only: no write buttons.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { formatHash, setQuery } from '../router.js';
import type { ScreenProps } from '../app.js';
import { call, errorText } from '../api.js';
import { describeTable, type TableInfo } from './tables/data.js';
import { TableList } from './tables/list.js';
import { TableRecords } from './tables/records.js';
import { TableStructure } from './tables/structure.js';

const DEFAULT_DATABASE = 'main';

export function TablesScreen(props: ScreenProps) {
  const [database = DEFAULT_DATABASE, table] = props.route.path;
  return html`
    <div class="tables-screen">
      <${TableList} database=${database} table=${table} />
      <section class="tables-main" aria-label=${table ? `Table ${table}` : `Database ${database}`}>
        ${table
          ? html`<${TableView} key=${`${database}/${table}`} database=${database} table=${table} query=${props.route.query} />`
          : html`<${DatabaseView} key=${database} database=${database} />`}
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

const DATABASE_PAGE = 50;

/** A database's tables, a page at a time: columns, indexes, and the topic of integration tables. */
function DatabaseView(props: { database: string }) {
  const [offset, setOffset] = useState(0);
  const [tables, setTables] = useState<TableInfo[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState('');

  useEffect(() => {
    const abort = new AbortController();
    (async () => {
      const listed = await call<{ data: Array<{ tableName: string }>; totalRecordCount: number }>('db', 'listTables', { databaseName: props.database, skipRecords: offset, maxRecords: DATABASE_PAGE }, abort.signal);
      const names = listed.data.map((entry) => entry.tableName);
      const described = names.length === 0 ? { data: [] as TableInfo[] } : await call<{ data: TableInfo[] }>('db', 'describeTables', { databaseName: props.database, tableNames: names }, abort.signal);
      setTables(described.data);
      setTotal(listed.totalRecordCount);
      setError('');
    })().catch((failure) => { if (!abort.signal.aborted) setError(errorText(failure)); });
    return () => abort.abort();
  }, [props.database, offset]);

  return html`
    <div class="card database-view">
      <h2>Database ${props.database}</h2>
      <p class="muted">${total} table${total === 1 ? '' : 's'}. Pick one to see its records, fields and indexes.</p>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${tables && tables.length > 0 && html`
        <div class="grid-scroll">
          <table aria-label=${`Tables of ${props.database}`}>
            <thead><tr><th>Table</th><th>Fields</th><th>Indexes</th><th>Kind</th><th>Created</th></tr></thead>
            <tbody>
              ${tables.map((table) => html`
                <tr>
                  <td><a href=${formatHash({ screen: 'tables', path: [props.database, table.tableName] })}>${table.tableName}</a></td>
                  <td class="mono small">${table.fields.map((field) => field.name).join(', ')}</td>
                  <td class="mono small">${table.indexes.map((index) => index.indexName).join(', ')}</td>
                  <td>${table.integrationTable ? html`topic <code>${table.topic}</code> (read-only)` : 'table'}</td>
                  <td class="muted small">${table.createdAt ? new Date(table.createdAt).toLocaleString() : ''}</td>
                </tr>`)}
            </tbody>
          </table>
        </div>`}
      ${total > DATABASE_PAGE && html`
        <div class="row pager">
          <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - DATABASE_PAGE))}>Previous</button>
          <span>${offset + 1}–${Math.min(offset + DATABASE_PAGE, total)} of ${total}</span>
          <button type="button" disabled=${offset + DATABASE_PAGE >= total} onClick=${() => setOffset(offset + DATABASE_PAGE)}>Next</button>
        </div>`}
    </div>`;
}
