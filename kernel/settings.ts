/**
 * Settings: config/default.json, then the file named by --config or ENGINE_CONFIG merged over it,
 * then ENGINE_<SETTING> environment variables. Validated against config/schema.json; a wrong type
 * or an unknown name stops the start with a message naming it.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ajv } from './schema-validator';
import { BUILTIN_ROLES } from './auth/roles';

export interface RoleSetting {
  name: string;
  description?: string;
  grants: Array<{ commands: string[]; resources: string[] }>;
  denies?: Array<{ commands: string[]; resources: string[] }>;
}

export type Port = number | null;

export interface Settings {
  listening_host: string | null;
  listening_http_port: Port;
  listening_https_port: Port;
  mqtt_port: Port;
  mqtts_port: Port;
  mqtt_ws_port: Port;
  mqtt_wss_port: Port;
  data_dir: string;
  plugins: string[];
  plugin_options: Record<string, Record<string, unknown>>;
  plugin_timeout_ms: number;
  default_database_name: string;
  default_owner_name: string;
  default_binary_format: 'hex' | 'base64' | 'byteArray';
  default_number_format: 'number' | 'string';
  /** publishMessagesToMq's `validateMqttPayload` when neither the call nor the session sets it. */
  default_validate_mqtt_payload: boolean;
  default_response_options: Record<string, unknown>;
  tls_cert_file: string | null;
  tls_key_file: string | null;
  tls_client_certificates: 'off' | 'optional' | 'required';
  tls_client_ca_file: string | null;
  tls_client_crl_file: string | null;
  tls_certificate_account_field: 'subject_cn' | 'subject_email' | 'san_email' | 'san_dns';
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  body_limit_bytes: number;
  session_idle_timeout_seconds: number;
  session_max_idle_timeout_seconds: number;
  session_max_lifetime_seconds: number;
  cursor_idle_timeout_seconds: number;
  transaction_idle_timeout_seconds: number;
  credential_cache_seconds: number;
  password_hash_workers: number;
  login_failures_before_backoff: number;
  login_backoff_max_seconds: number;
  login_shared_addresses: string[];
  roles: RoleSetting[];
  mqtt_allow_anonymous: boolean;
  mqtt_anonymous_role: string | null;
  mqtt_max_keepalive: number;
  mqtt_max_packet_size: number;
  mq_ring_messages: number;
  mq_ring_bytes: number;
  mqtt_receive_maximum: number;
  /** GET /metrics needs Basic or Bearer and a `metrics.read` grant (plugins/metrics). */
  metrics_require_auth: boolean;
  /** SIGTERM/SIGINT: the longest the drain may take before the process exits anyway. */
  shutdown_timeout_seconds: number;
  /** Storage (issue 20): new data is refused (STORAGE_FULL) below this many free bytes on the data folder's filesystem. */
  storage_min_free_bytes: number;
  /** The message log's size limit in bytes (0: none); its oldest messages no session owes are trimmed. */
  log_max_bytes: number;
  /** The age limit of topics without a retention policy, in seconds (0: none). */
  log_default_retention_seconds: number;
  /** The folder the admin action backupDatabase writes under (null: wherever the server may). */
  backup_root: string | null;
  // SQL (plugins/sql, docs/sql.md)
  sql_workers: number;
  sql_timeout_ms: number;
  sql_max_records: number;
  sql_max_statements: number;
  sql_max_statement_length: number;
  sql_main_slice_ms: number;
  sql_max_cursors_per_session: number;
  // cluster-nats (docs/cluster.md)
  cluster_nats_servers: string[];
  cluster_node_name: string | null;
  cluster_stream_replicas: number;
  cluster_request_timeout_ms: number;
  /** 'latest': a read waits until this node has applied what the stream held when it came (docs/cluster.md). */
  cluster_read_consistency: 'local' | 'latest';
  cluster_node_lease_ms: number;
}

/** Environment variables that are not settings. */
const RESERVED_ENV = new Set(['ENGINE_CONFIG', 'ENGINE_ADMIN_PASSWORD']);
const PORT_SETTINGS = ['listening_http_port', 'listening_https_port', 'mqtt_port', 'mqtts_port', 'mqtt_ws_port', 'mqtt_wss_port'] as const;

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

export const CONFIG_DIR = resolve(__dirname, '..', '..', 'config');

const schema = JSON.parse(readFileSync(join(CONFIG_DIR, 'schema.json'), 'utf8')) as {
  properties: Record<string, { type?: string | string[]; $ref?: string; enum?: unknown[] }>;
};
const validateSettings = ajv.compile(schema);

export function defaultSettings(): Settings {
  return readJson(join(CONFIG_DIR, "default.json")) as unknown as Settings;
}

export interface SettingsSources {
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Settings given directly (tests, embedding); applied after files, before the environment. */
  overrides?: Partial<Settings>;
}

export function loadSettings(sources: SettingsSources = {}): Settings {
  const env = sources.env ?? {};
  const merged: Record<string, unknown> = { ...defaultSettings() };
  const configFile = configFileFrom(sources.argv ?? [], env);
  if (configFile) Object.assign(merged, readJson(resolve(configFile)));
  if (sources.overrides) Object.assign(merged, sources.overrides);
  Object.assign(merged, settingsFromEnv(env));
  return validate(merged);
}

export function validate(candidate: Record<string, unknown>): Settings {
  if (!validateSettings(candidate)) {
    const first = validateSettings.errors![0];
    if (first.keyword === 'additionalProperties' && first.instancePath === '') {
      const name = (first.params as { additionalProperty: string }).additionalProperty;
      throw new SettingsError(`unknown setting "${name}" (environment variable ENGINE_${name.toUpperCase()})`);
    }
    if (first.keyword === 'additionalProperties') {
      const name = first.instancePath.split('/')[1];
      const extra = (first.params as { additionalProperty: string }).additionalProperty;
      throw new SettingsError(`setting "${name}" has an unknown property "${extra}" at ${first.instancePath}`);
    }
    const name = first.instancePath.split('/')[1] ?? '';
    const shown = JSON.stringify(candidate[name]);
    throw new SettingsError(`setting "${name}" has an invalid value ${shown}: ${describeExpected(name, first.message)}`);
  }
  const settings = candidate as unknown as Settings;
  for (const port of PORT_SETTINGS) if ((settings[port] as unknown) === 'off') settings[port] = null;
  checkDeclaredRoles(settings.roles);
  return settings;
}

/** Roles in the settings may not reuse a built-in role's name or each other's. */
function checkDeclaredRoles(roles: readonly RoleSetting[]): void {
  const seen = new Set<string>();
  for (const role of roles) {
    const name = role.name.toLowerCase();
    if (BUILTIN_ROLES.some((builtin) => builtin.name === name)) {
      throw new SettingsError(`setting "roles" declares "${role.name}", the name of a built-in role; choose another name`);
    }
    if (seen.has(name)) throw new SettingsError(`setting "roles" declares "${role.name}" twice`);
    seen.add(name);
  }
}

function describeExpected(name: string, ajvMessage: string | undefined): string {
  if ((PORT_SETTINGS as readonly string[]).includes(name)) return 'expected a port number 0-65535 or "off"';
  return ajvMessage ?? 'invalid';
}

function configFileFrom(argv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--config') {
      if (!argv[i + 1]) throw new SettingsError('--config needs a file name');
      return argv[i + 1];
    }
    if (argv[i].startsWith('--config=')) return argv[i].slice('--config='.length);
  }
  return env.ENGINE_CONFIG || undefined;
}

function readJson(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SettingsError(`cannot read settings file ${file}: ${(error as Error).message}`);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new SettingsError(`settings file ${file} is not a JSON object: ${(error as Error).message}`);
  }
}

/** ENGINE_LISTENING_HTTP_PORT=18080 → { listening_http_port: 18080 }, typed by the schema. */
function settingsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(env)) {
    if (!key.startsWith('ENGINE_') || RESERVED_ENV.has(key) || raw === undefined) continue;
    const name = key.slice('ENGINE_'.length).toLowerCase();
    result[name] = coerce(name, raw);
  }
  return result;
}

function coerce(name: string, raw: string): unknown {
  const property = schema.properties[name];
  if (!property) return raw; // reported as unknown by validation
  const types = property.$ref ? ['integer', 'null'] : ([] as string[]).concat(property.type ?? []);
  const trimmed = raw.trim();
  if (trimmed === 'off' && types.includes('null')) return null;
  if (trimmed === 'null' && types.includes('null')) return null;
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  if (types.includes('boolean') && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  if ((types.includes('array') || types.includes('object')) && /^[[{]/.test(trimmed)) {
    try { return JSON.parse(trimmed); } catch { return raw; }
  }
  return raw;
}
