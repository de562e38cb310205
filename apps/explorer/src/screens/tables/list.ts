/**
 * The databases and the tables of one database (listDatabases, listTables paged on the server,
 * with a name-prefix filter). Links are deep links `#/tables/<database>/<table>`.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { call, errorText } from '../../api.js';
import { formatHash, navigate } from '../../router.js';

const PAGE = 100;

interface TableName {
  databaseName: string;
  tableName: string;
  /** From describeTables: a topic's integration table (read-only here), and its topic. */
  integrationTable?: boolean;
  topic?: string | null;
}

export function TableList(props: { database: string; table?: string }) {
  const [databases, setDatabases] = useState<string[]>([]);
  const [tables, setTables] = useState<TableName[]>([]);
  const [total, setTotal] = useState(0);
  const [filter, setFilter] = useState('');
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState('');

  useEffect(() => {
    const abort = new AbortController();
    call<{ data: Array<{ databaseName: string }> }>('db', 'listDatabases', {}, abort.signal)
      .then((result) => setDatabases(result.data.map((entry) => entry.databaseName)))
      .catch((failure) => { if (!abort.signal.aborted) setError(errorText(failure)); });
    return () => abort.abort();
  }, []);

  useEffect(() => { setOffset(0); }, [props.database, filter]);

  useEffect(() => {
    const abort = new AbortController();
    const params: Record<string, unknown> = { databaseName: props.database, skipRecords: offset, maxRecords: PAGE };
    if (filter.trim()) params.partialTableName = filter.trim();
    call<{ data: TableName[]; totalRecordCount: number }>('db', 'listTables', params, abort.signal)
      .then(async (result) => {
        // Which of the page's tables are integration tables (one describeTables call), to list them apart.
        const names = result.data.map((entry) => entry.tableName);
        const described = names.length === 0 ? { data: [] } : await call<{ data: Array<{ tableName: string; integrationTable: boolean; topic: string | null }> }>('db', 'describeTables', { databaseName: props.database, tableNames: names }, abort.signal).catch(() => ({ data: [] }));
        const kinds = new Map(described.data.map((entry) => [entry.tableName, entry]));
        setTables(result.data.map((entry) => ({ ...entry, integrationTable: kinds.get(entry.tableName)?.integrationTable ?? false, topic: kinds.get(entry.tableName)?.topic ?? null })));
        setTotal(result.totalRecordCount);
        setError('');
      })
      .catch((failure) => {
        if (abort.signal.aborted) return;
        setTables([]);
        setTotal(0);
        setError(errorText(failure));
      });
    return () => abort.abort();
  }, [props.database, filter, offset]);

  const known = databases.includes(props.database) ? databases : [props.database, ...databases];
  return html`
    <aside class="tables-nav card" aria-label="Databases and tables">
      <label class="field">Database
        <select value=${props.database} onChange=${(event: Event) => navigate({ screen: 'tables', path: [(event.target as HTMLSelectElement).value] })}>
          ${known.map((name) => html`<option value=${name}>${name}</option>`)}
        </select>
      </label>
      <label class="field">Table name starts with
        <input type="search" value=${filter} onInput=${(event: Event) => setFilter((event.target as HTMLInputElement).value)} />
      </label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${[
        { label: 'Tables', entries: tables.filter((entry) => !entry.integrationTable) },
        { label: 'Integration tables (MQTT topics)', entries: tables.filter((entry) => entry.integrationTable) },
      ].filter((group) => group.entries.length > 0).map((group) => html`
        <nav aria-label=${group.label} class="table-group">
          <h3 class="table-group-title">${group.label}</h3>
          <ul class="table-links">
            ${group.entries.map((entry) => html`
              <li><a href=${formatHash({ screen: 'tables', path: [props.database, entry.tableName] })} title=${entry.topic ? `Topic ${entry.topic}` : undefined}
                class=${entry.tableName === props.table ? 'active' : ''} aria-current=${entry.tableName === props.table ? 'page' : undefined}>${entry.tableName}</a></li>`)}
          </ul>
        </nav>`)}
      ${tables.length === 0 && !error && html`<p class="muted">No tables${filter ? ' match' : ''}.</p>`}
      <p class="muted small">${total} table${total === 1 ? '' : 's'}</p>
      ${total > PAGE && html`
        <div class="row">
          <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>Previous tables</button>
          <span class="muted">${offset + 1}–${Math.min(offset + PAGE, total)}</span>
          <button type="button" disabled=${offset + PAGE >= total} onClick=${() => setOffset(offset + PAGE)}>Next tables</button>
        </div>`}
    </aside>`;
}
