/**
 * A table's columns and indexes (describeTables, listIndexes). On a topic's integration table, a
 * numeric transform field (a column after the built-in ones) links to the topic's chart of it.
 */
import { html } from '../../html.js';
import { formatHash } from '../../router.js';
import type { FieldInfo, TableInfo } from './data.js';

/** The columns every integration table has (docs/storage.md); the others are transform fields. */
const BUILT_IN = new Set(['id', 'create_ts', 'source_payload', 'error', 'log', 'mqtt_qos', 'mqtt_retain', 'mqtt_content_type',
  'mqtt_correlation_data', 'mqtt_response_topic', 'mqtt_expiry_seconds', 'mqtt_user_properties', 'mqtt_payload_format', 'mqtt_publisher']);
const NUMERIC = /^(?:bit|tinyint|smallint|int|integer|bigint|real|float|double|decimal|numeric)\b/i;

function chartLink(info: TableInfo, field: FieldInfo): unknown {
  if (!info.integrationTable || !info.topic || BUILT_IN.has(field.name) || !NUMERIC.test(field.type)) return '';
  return html`<a href=${formatHash({ screen: 'topics', path: info.topic.split('/'), query: { tab: 'chart', field: `@${field.name}` } })}
    aria-label=${`Chart ${field.name}`}>chart</a>`;
}

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
                <td class="mono">${field.name} ${chartLink(info, field)}</td>
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
