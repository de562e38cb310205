import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings, SettingsError } from '../../kernel/settings';
import { tempDataDir } from '../helpers/server';

describe('kernel/settings', () => {
  it('starts from config/default.json', () => {
    const settings = loadSettings({ env: {} });
    assert.equal(settings.listening_http_port, 8080);
    assert.equal(settings.listening_https_port, 8443);
    assert.equal(settings.mqtt_port, 1883);
    assert.equal(settings.data_dir, './data');
    assert.equal(settings.default_database_name, 'main');
    assert.equal(settings.default_binary_format, 'hex');
    assert.ok(settings.plugins.includes('storage-lmdb'));
  });

  it('merges --config and ENGINE_CONFIG files, environment winning over files', () => {
    const dir = tempDataDir('settings');
    const file = join(dir, 'engine.json');
    writeFileSync(file, JSON.stringify({ listening_http_port: 9000, data_dir: '/tmp/x' }));
    assert.equal(loadSettings({ argv: ['--config', file], env: {} }).listening_http_port, 9000);
    assert.equal(loadSettings({ argv: [`--config=${file}`], env: {} }).data_dir, '/tmp/x');
    assert.equal(loadSettings({ env: { ENGINE_CONFIG: file } }).listening_http_port, 9000);
    assert.equal(loadSettings({ env: { ENGINE_CONFIG: file, ENGINE_LISTENING_HTTP_PORT: '18080' } }).listening_http_port, 18080);
  });

  it('types environment values by the schema', () => {
    const settings = loadSettings({
      env: {
        ENGINE_LISTENING_HTTPS_PORT: 'off', ENGINE_MQTT_ALLOW_ANONYMOUS: 'true', ENGINE_DATA_DIR: '123',
        ENGINE_PLUGINS: '["http"]', ENGINE_ADMIN_PASSWORD: 'not a setting',
      },
    });
    assert.equal(settings.listening_https_port, null);
    assert.equal(settings.mqtt_allow_anonymous, true);
    assert.equal(settings.data_dir, '123');
    assert.deepEqual(settings.plugins, ['http']);
  });

  it('accepts "off" and null for ports in files', () => {
    const dir = tempDataDir('settings');
    const file = join(dir, 'ports.json');
    writeFileSync(file, JSON.stringify({ listening_http_port: 'off', mqtt_port: null }));
    const settings = loadSettings({ argv: ['--config', file], env: {} });
    assert.equal(settings.listening_http_port, null);
    assert.equal(settings.mqtt_port, null);
  });

  const rejected: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    ['a non-numeric port', { ENGINE_LISTENING_HTTP_PORT: 'abc' }, /listening_http_port/],
    ['a port out of range', { ENGINE_MQTT_PORT: '70000' }, /mqtt_port/],
    ['an unknown setting', { ENGINE_NO_SUCH_THING: '1' }, /no_such_thing/],
    ['a wrong enum value', { ENGINE_LOG_LEVEL: 'loud' }, /log_level/],
    ['a wrong type', { ENGINE_MQTT_ALLOW_ANONYMOUS: 'maybe' }, /mqtt_allow_anonymous/],
    // Its data cursors' ids would begin `sql-east.`, which the cursor actions take for SQL cursors.
    ['a node name starting sql-', { ENGINE_CLUSTER_NODE_NAME: 'sql-east' }, /cluster_node_name/],
  ];
  for (const [what, env, pattern] of rejected) {
    it(`rejects ${what}, naming the setting`, () => {
      assert.throws(() => loadSettings({ env }), (error: Error) => error instanceof SettingsError && pattern.test(error.message));
    });
  }

  it('rejects unknown settings and bad JSON in files', () => {
    const dir = tempDataDir('settings');
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ listening_http_prot: 1 }));
    assert.throws(() => loadSettings({ argv: ['--config', unknown], env: {} }), /listening_http_prot/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ nope');
    assert.throws(() => loadSettings({ argv: ['--config', broken], env: {} }), /broken\.json/);
    assert.throws(() => loadSettings({ argv: ['--config', join(dir, 'missing.json')], env: {} }), /missing\.json/);
  });
});

describe('kernel/settings: declared roles and nested properties', () => {
  const withRoles = (roles: unknown): (() => unknown) => () => {
    const dir = tempDataDir('settings');
    const file = join(dir, 'roles.json');
    writeFileSync(file, JSON.stringify({ roles }));
    return loadSettings({ argv: ['--config', file], env: {} });
  };

  it('refuses a role that reuses a built-in name or is declared twice', () => {
    assert.throws(withRoles([{ name: 'Admin', grants: [] }]), /"Admin", the name of a built-in role/);
    assert.throws(withRoles([{ name: 'reader', grants: [] }]), /built-in role/);
    assert.throws(withRoles([{ name: 'x', grants: [] }, { name: 'X', grants: [] }]), /"X" twice/);
  });

  it('names the setting when a property inside it is unknown', () => {
    assert.throws(withRoles([{ name: 'x', grants: [], grnts: [] }]), /setting "roles" has an unknown property "grnts" at \/roles\/0/);
  });
});
