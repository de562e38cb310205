/**
 * A table's records, one server-side page at a time in the chosen index's order (record-ID order
 * by default), optionally within an index range; insert and edit as JSON, inline cell edits,
 * delete with a confirmation, and CSV/JSON export of the rows shown. The query lives in the URL:
 * `?index=..&page=..&size=..&from=..&to=..`.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { call, errorText } from '../../api.js';
import { setQuery } from '../../router.js';
import {
  ID_INDEX, cellText, convertInput, downloadText, fetchRecords, insertTemplate, orderedBounds, parseBound, toCsv,
  type RecordPage, type Row, type TableInfo,
} from './data.js';

const SIZES = [20, 50, 100, 500];

interface Editor {
  mode: 'insert' | 'edit';
  id?: unknown;
  text: string;
  error: string;
}

interface CellEdit {
  id: unknown;
  field: string;
  text: string;
}

function positiveInt(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return Number.isInteger(value) && value >= 1 ? value : fallback;
}

export function TableRecords(props: { info: TableInfo; query: Record<string, string>; readOnly: boolean }) {
  const { info, query, readOnly } = props;
  const indexName = info.indexes.some((index) => index.indexName === query.index) ? query.index : ID_INDEX;
  const index = info.indexes.find((candidate) => candidate.indexName === indexName);
  const page = positiveInt(query.page, 1);
  const size = SIZES.includes(Number(query.size)) ? Number(query.size) : 50;
  const from = query.from ?? '';
  const to = query.to ?? '';
  const filter = query.filter ?? '';
  const ranged = from !== '' || to !== '';
  const narrowed = ranged || filter !== '';

  const [fromText, setFromText] = useState(from);
  const [toText, setToText] = useState(to);
  const [filterText, setFilterText] = useState(filter);
  const [data, setData] = useState<RecordPage | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [reload, setReload] = useState(0);
  const [editor, setEditor] = useState<Editor | null>(null);
  const [cell, setCell] = useState<CellEdit | null>(null);
  const [confirmId, setConfirmId] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  useEffect(() => { setFromText(from); setToText(to); setFilterText(filter); }, [from, to, filter]);

  useEffect(() => {
    const abort = new AbortController();
    let bounds: { from?: unknown[]; to?: unknown[] };
    try {
      bounds = orderedBounds(parseBound(from, index, info.fields), parseBound(to, index, info.fields));
    } catch (failure) {
      setError(`Range: ${errorText(failure)}`);
      setData(null);
      return;
    }
    setLoading(true);
    fetchRecords({ databaseName: info.databaseName, tableName: info.tableName, indexName, page, size, ...bounds, filter: filter || undefined }, abort.signal)
      .then((result) => { setData(result); setError(''); })
      .catch((failure) => { if (!abort.signal.aborted) { setData(null); setError(errorText(failure)); } })
      .finally(() => { if (!abort.signal.aborted) setLoading(false); });
    return () => abort.abort();
  }, [info, indexName, page, size, from, to, filter, reload]);

  const fieldType = (name: string) => info.fields.find((field) => field.name === name);
  const rows = data?.rows ?? [];
  const columns = data?.fields ?? info.fields.map((field) => field.name);
  const pages = data && !narrowed ? Math.max(1, Math.ceil(data.total / size)) : undefined;
  const base = `${info.tableName}-${narrowed ? 'query' : `page${page}`}`;

  async function write(action: string, params: Record<string, unknown>, done: string): Promise<boolean> {
    setBusy(true);
    try {
      await call('db', action, { databaseName: info.databaseName, tableName: info.tableName, ...params });
      setStatus(done);
      setReload((count) => count + 1);
      return true;
    } catch (failure) {
      setStatus('');
      throw failure;
    } finally {
      setBusy(false);
    }
  }

  async function saveEditor(event: Event) {
    event.preventDefault();
    if (!editor) return;
    let record: Row;
    try {
      const parsed = JSON.parse(editor.text) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the record must be a JSON object');
      record = parsed as Row;
    } catch (failure) {
      setEditor({ ...editor, error: errorText(failure) });
      return;
    }
    try {
      if (editor.mode === 'insert') {
        const result = await call<{ ids: unknown[] }>('db', 'insertRecords', { databaseName: info.databaseName, tableName: info.tableName, dataFormat: 'objects', sourceData: [record] });
        setStatus(`Record ${String(result.ids[0])} inserted.`);
        setReload((count) => count + 1);
      } else {
        await write('updateRecords', { dataFormat: 'objects', sourceData: [{ ...record, id: editor.id }] }, `Record ${String(editor.id)} updated.`);
      }
      setEditor(null);
    } catch (failure) {
      setEditor({ ...editor, error: errorText(failure) });
    }
  }

  async function saveCell() {
    if (!cell) return;
    const field = fieldType(cell.field);
    try {
      const value = convertInput(cell.text, field?.type ?? 'varchar', field?.nullable ?? true);
      await write('updateRecords', { dataFormat: 'objects', sourceData: [{ id: cell.id, [cell.field]: value }] }, `Record ${String(cell.id)}: ${cell.field} updated.`);
      setCell(null);
    } catch (failure) {
      setError(`Record ${String(cell.id)}: ${errorText(failure)}`);
    }
  }

  async function confirmDelete() {
    const id = confirmId;
    try {
      await write('deleteRecords', { ids: [id] }, `Record ${String(id)} deleted.`);
    } catch (failure) {
      setError(errorText(failure));
    }
    setConfirmId(undefined);
  }

  function runQuery(event: Event) {
    event.preventDefault();
    try {
      parseBound(fromText, index, info.fields);
      parseBound(toText, index, info.fields);
    } catch (failure) {
      setError(`Range: ${errorText(failure)}`);
      return;
    }
    setQuery({ from: fromText.trim() || undefined, to: toText.trim() || undefined, filter: filterText.trim() || undefined, page: undefined });
  }

  const editable = (name: string) => !readOnly && name !== 'id' && !(fieldType(name)?.autoValue ?? 'none').startsWith('timestamp');

  return html`
    <section class="records" aria-label="Records">
      <form class="row toolbar" onSubmit=${runQuery}>
        <label class="field inline">Order by index
          <select value=${indexName} onChange=${(event: Event) => setQuery({ index: (event.target as HTMLSelectElement).value === ID_INDEX ? undefined : (event.target as HTMLSelectElement).value, page: undefined, from: undefined, to: undefined })}>
            ${info.indexes.map((candidate) => html`<option value=${candidate.indexName}>${candidate.indexName === ID_INDEX ? 'record ID (id_pk)' : candidate.indexName}</option>`)}
          </select>
        </label>
        <label class="field inline">From
          <input class="bound" value=${fromText} placeholder=${index?.fields[0]?.name ?? 'id'} onInput=${(event: Event) => setFromText((event.target as HTMLInputElement).value)} />
        </label>
        <label class="field inline">To
          <input class="bound" value=${toText} placeholder=${index?.fields[0]?.name ?? 'id'} onInput=${(event: Event) => setToText((event.target as HTMLInputElement).value)} />
        </label>
        <label class="field inline grow">Filter
          <input class="filter grow" value=${filterText} placeholder=${`e.g. ${info.fields.find((field) => field.name !== 'id')?.name ?? 'id'} != null`} onInput=${(event: Event) => setFilterText((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Query</button>
        ${narrowed && html`<button type="button" onClick=${() => setQuery({ from: undefined, to: undefined, filter: undefined, page: undefined })}>Clear</button>`}
      </form>
      <div class="row">
        <p class="muted small grow">${ranged ? `Range on ${indexName}: from ${from || '(start)'} to ${to || '(end)'}, inclusive. ` : ''}${filter ? `Filter: ${filter}. ` : ''}A bound is a value of the index's first field (text with or without quotes), or a JSON array of leading values (["even", 10]); the bounds may be typed in either order; the filter is an expression over any columns.</p>
        ${!readOnly && html`<button type="button" class="primary" onClick=${() => setEditor({ mode: 'insert', text: JSON.stringify(insertTemplate(info.fields), null, 2), error: '' })}>Insert record</button>`}
        <button type="button" disabled=${rows.length === 0} onClick=${() => downloadText(`${base}.csv`, toCsv(columns, rows), 'text/csv')}>Export CSV</button>
        <button type="button" disabled=${rows.length === 0} onClick=${() => downloadText(`${base}.json`, JSON.stringify(rows, null, 2) + '\n', 'application/json')}>Export JSON</button>
      </div>

      ${error && html`<p class="error" role="alert">${error}</p>`}
      <p class="status" role="status">${status}</p>

      ${editor && html`
        <form class="card editor" role="dialog" aria-label=${editor.mode === 'insert' ? 'Insert record' : `Edit record ${String(editor.id)}`} onSubmit=${saveEditor}>
          <h3>${editor.mode === 'insert' ? 'Insert record' : `Edit record ${String(editor.id)}`}</h3>
          <label>Record JSON
            <textarea rows=${Math.min(20, editor.text.split('\n').length + 1)} spellcheck=${false} value=${editor.text}
              onInput=${(event: Event) => setEditor({ ...editor, text: (event.target as HTMLTextAreaElement).value })}></textarea>
          </label>
          <p class="muted small">${editor.mode === 'insert'
            ? 'Omitted fields are null (or their default); the record ID is assigned by the server.'
            : 'Only the fields given change (null clears one); omitted fields keep their values.'}</p>
          ${editor.error && html`<p class="error" role="alert">${editor.error}</p>`}
          <div class="row">
            <button type="submit" class="primary" disabled=${busy}>Save</button>
            <button type="button" onClick=${() => setEditor(null)}>Cancel</button>
          </div>
        </form>`}

      ${confirmId !== undefined && html`
        <div class="card confirm" role="alertdialog" aria-label="Confirm delete">
          <p>Delete record ${String(confirmId)} of ${info.tableName}? This cannot be undone.</p>
          <div class="row">
            <button type="button" class="danger" disabled=${busy} onClick=${() => { void confirmDelete(); }}>Delete</button>
            <button type="button" onClick=${() => setConfirmId(undefined)}>Cancel</button>
          </div>
        </div>`}

      <div class="grid-scroll records-grid" aria-busy=${loading ? 'true' : 'false'}>
        <table aria-label=${`Records of ${info.tableName}`}>
          <thead><tr>${columns.map((name) => html`<th scope="col">${name}</th>`)}${!readOnly && html`<th scope="col"><span class="sr-only">Actions</span></th>`}</tr></thead>
          <tbody>
            ${rows.map((row) => html`
              <tr key=${String(row.id)}>
                ${columns.map((name) => {
                  const editing = cell && cell.id === row.id && cell.field === name;
                  if (editing) {
                    return html`<td class="editing"><${CellInput} label=${`${name} of record ${String(row.id)}`} value=${cell.text}
                      onInput=${(text: string) => setCell({ ...cell, text })} onSave=${() => { void saveCell(); }} onCancel=${() => { setCell(null); setError(''); }} /></td>`;
                  }
                  const value = row[name];
                  const canEdit = editable(name);
                  return html`<td class=${`${value === null || value === undefined ? 'null' : ''} ${canEdit ? 'editable' : ''}`}
                    title=${canEdit ? 'Click to edit' : undefined}
                    tabIndex=${canEdit ? 0 : undefined}
                    onClick=${canEdit ? () => setCell({ id: row.id, field: name, text: cellText(value) }) : undefined}
                    onKeyDown=${canEdit ? (event: KeyboardEvent) => { if (event.key === 'Enter') setCell({ id: row.id, field: name, text: cellText(value) }); } : undefined}
                  >${value === null || value === undefined ? 'null' : cellText(value)}</td>`;
                })}
                ${!readOnly && html`
                  <td class="actions">
                    <button type="button" aria-label=${`Edit record ${String(row.id)} as JSON`} onClick=${() => setEditor({ mode: 'edit', id: row.id, text: JSON.stringify(withoutId(row), null, 2), error: '' })}>Edit</button>
                    <button type="button" class="danger" aria-label=${`Delete record ${String(row.id)}`} onClick=${() => setConfirmId(row.id)}>Delete</button>
                  </td>`}
              </tr>`)}
          </tbody>
        </table>
        ${data && rows.length === 0 && html`<p class="muted">No records${narrowed ? ' match' : page > 1 ? ' on this page' : ''}.</p>`}
      </div>

      <nav class="row pager" aria-label="Pages">
        <button type="button" disabled=${page <= 1} onClick=${() => setQuery({ page: undefined })}>First</button>
        <button type="button" disabled=${page <= 1} onClick=${() => setQuery({ page: page - 1 > 1 ? page - 1 : undefined })}>Previous</button>
        <label class="field inline">Go to page
          <input class="page-number" type="number" min="1" max=${pages} value=${String(page)}
            onChange=${(event: Event) => { const wanted = positiveInt((event.target as HTMLInputElement).value, page); setQuery({ page: Math.min(wanted, pages ?? wanted) > 1 ? Math.min(wanted, pages ?? wanted) : undefined }); }} />
        </label>
        <span aria-live="polite">Page ${page}${pages ? ` of ${pages}` : ''}</span>
        <button type="button" disabled=${!data?.more} onClick=${() => setQuery({ page: page + 1 })}>Next</button>
        ${pages && html`<button type="button" disabled=${page >= pages} onClick=${() => setQuery({ page: pages })}>Last</button>`}
        <label class="field inline">Page size
          <select value=${String(size)} onChange=${(event: Event) => setQuery({ size: (event.target as HTMLSelectElement).value, page: undefined })}>
            ${SIZES.map((candidate) => html`<option value=${String(candidate)}>${candidate}</option>`)}
          </select>
        </label>
        <span class="muted">${data ? `${rows.length} shown, ${data.total} record${data.total === 1 ? '' : 's'} in the table` : ''}</span>
      </nav>
    </section>`;
}

function withoutId(row: Row): Row {
  const { id: _id, ...rest } = row;
  return rest;
}

/** The inline editor of one cell: Enter saves, Escape cancels. */
function CellInput(props: { label: string; value: string; onInput: (text: string) => void; onSave: () => void; onCancel: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => { input.current?.focus(); input.current?.select(); }, []);
  return html`
    <input ref=${input} aria-label=${props.label} value=${props.value}
      onInput=${(event: Event) => props.onInput((event.target as HTMLInputElement).value)}
      onKeyDown=${(event: KeyboardEvent) => {
        if (event.key === 'Enter') { event.preventDefault(); props.onSave(); }
        if (event.key === 'Escape') { event.preventDefault(); props.onCancel(); }
      }} />`;
}
