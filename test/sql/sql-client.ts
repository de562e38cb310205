/** Helpers for the SQL suites: a server with every plugin SQL needs, and SQL envelopes. */
import { startServer, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import { MQTT_PORTS } from '../mqtt/mqtt-helpers';

export const SQL_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt', 'sql'];

export function startSqlServer(overrides: Partial<Settings> = {}): Promise<TestServer> {
  return startServer({ plugins: SQL_PLUGINS, ...MQTT_PORTS, ...overrides });
}

export function query(authToken: string, sql: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'db', action: 'getRecordsUsingSql', params: { sql, ...params }, authToken, ...extra };
}

export function statements(authToken: string, sqlStatements: string[], params: Record<string, unknown> = {}): Record<string, unknown> {
  return { api: 'db', action: 'runSqlStatements', params: { sqlStatements, ...params }, authToken };
}
