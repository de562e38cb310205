/** A table's columns and indexes (describeTables, listIndexes). */
import { html } from '../../html.js';
import type { TableInfo } from './data.js';

export function TableStructure(props: { info: TableInfo }) {
  const { info } = props;
  return html`
    <section class="card" aria-label="Fields">
      <h3>Fields</h3>
      <div class="grid-scroll">
        <table>
          <thead><tr><th>Name</th><th>Type</th><th>Length</th><th>Scale</th><th>Nullable</th><th>Primary key</th><th>Auto value</th><th>Default</th></tr></thead>
          <tbody>
            ${info.fields.map((field) => html`
              <tr>
                <td class="mono">${field.name}</td>
                <td>${field.type}</td>
                <td>${field.length ?? ''}</td>
                <td>${field.scale ?? ''}</td>
                <td>${field.nullable ? 'yes' : 'no'}</td>
                <td>${field.primaryKey ? field.primaryKey : ''}</td>
                <td>${field.autoValue === 'none' ? '' : field.autoValue}</td>
                <td class="mono">${field.defaultValue === null || field.defaultValue === undefined ? '' : JSON.stringify(field.defaultValue)}</td>
              </tr>`)}
          </tbody>
        </table>
      </div>
    </section>
    <section class="card" aria-label="Indexes">
      <h3>Indexes</h3>
      <div class="grid-scroll">
        <table>
          <thead><tr><th>Name</th><th>Segments</th><th>Unique</th><th>Automatic</th></tr></thead>
          <tbody>
            ${info.indexes.map((index) => html`
              <tr>
                <td class="mono">${index.indexName}</td>
                <td class="mono">${index.fields.map((segment) => `${segment.key ? `${segment.name}.${segment.key}` : segment.name}${segment.type ? ` ${segment.type}` : ''} ${segment.sortDescending || segment.ascending === false ? 'desc' : 'asc'}`).join(', ')}</td>
                <td>${index.unique ? 'yes' : 'no'}</td>
                <td>${index.automatic ? 'yes' : 'no'}</td>
              </tr>`)}
          </tbody>
        </table>
      </div>
    </section>`;
}
