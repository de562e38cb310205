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
      .then((result) => {
        setTables(result.data);
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
      <nav aria-label="Tables">
        <ul class="table-links">
          ${tables.map((entry) => html`
            <li><a href=${formatHash({ screen: 'tables', path: [props.database, entry.tableName] })}
              class=${entry.tableName === props.table ? 'active' : ''} aria-current=${entry.tableName === props.table ? 'page' : undefined}>${entry.tableName}</a></li>`)}
        </ul>
      </nav>
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
