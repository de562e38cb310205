import assert from 'node:assert/strict';
import { authorize, isAllowed, resourceKey } from '../../kernel/auth/authorize';
import { RoleCatalog } from '../../kernel/auth/roles';
import { ResourceAliases } from '../../kernel/auth/resource-aliases';
import { filterCovers, topicFilterProblem, topicMatches } from '../../kernel/auth/topic-filter';
import { topicNameProblem } from '../../kernel/topic-name';
import type { Resource } from '../../kernel/bus/command';
import type { EngineError } from '../../kernel/errors';

const table = (t: string, database = 'main'): Resource => ({ kind: 'table', database, table: t });
const topic = (name: string): Resource => ({ kind: 'topic', topic: name });

describe('kernel/auth/authorize', () => {
  const roles = new RoleCatalog([
    {
      name: 'sensors',
      grants: [
        { commands: ['mq.publish', 'mq.subscribe'], resources: ['topic:sensors/#'] },
        { commands: ['record.*'], resources: ['table:main/readings*'] },
      ],
      denies: [{ commands: ['mq.subscribe'], resources: ['topic:sensors/secret'] }],
    },
  ]);
  const admin = { account: 'admin', roles: ['admin'] };
  const reader = { account: 'rita', roles: ['reader'] };
  const sensor = { account: 'sam', roles: ['sensors'] };
  const nobody = { account: 'nina', roles: [] };

  it('lets admin do everything', () => {
    assert.ok(isAllowed(roles, admin, 'table.delete', table('x')));
    assert.ok(isAllowed(roles, admin, 'account.create', { kind: 'account', account: 'bob' }));
  });

  it('lets the reader role read but not write', () => {
    for (const command of ['record.find', 'record.get', 'table.list', 'table.describe', 'index.list', 'cursor.fetch', 'mq.retrieve']) {
      assert.ok(isAllowed(roles, reader, command, table('t')), command);
    }
    for (const command of ['record.insert', 'record.delete', 'table.create', 'table.delete', 'index.create', 'mq.publish', 'account.create']) {
      assert.ok(!isAllowed(roles, reader, command, table('t')), command);
    }
  });

  it('matches table globs and topic filters, with denies winning', () => {
    assert.ok(isAllowed(roles, sensor, 'record.insert', table('readings_2024')));
    assert.ok(!isAllowed(roles, sensor, 'record.insert', table('orders')));
    assert.ok(!isAllowed(roles, sensor, 'record.insert', table('readings', 'other')));
    assert.ok(isAllowed(roles, sensor, 'mq.publish', topic('sensors/a/b')));
    assert.ok(isAllowed(roles, sensor, 'mq.subscribe', topic('sensors/+/temp')));
    assert.ok(!isAllowed(roles, sensor, 'mq.publish', topic('other/a')));
    assert.ok(!isAllowed(roles, sensor, 'mq.subscribe', topic('sensors/secret')));
    assert.ok(isAllowed(roles, sensor, 'mq.subscribe', topic('sensors/#')), 'a filter merely overlapping a denied topic is granted (its messages are withheld at delivery)');
    assert.ok(!isAllowed(roles, sensor, 'mq.subscribe', topic('sensors/secret')), 'the denied topic itself is not');
    assert.ok(isAllowed(roles, sensor, 'mq.publish', topic('sensors/secret')), 'the deny is for subscribe only');
  });

  it('denies a principal without roles, naming account, command and resource', () => {
    assert.throws(() => authorize(roles, nobody, 'record.find', table('t')), (e: EngineError) =>
      e.code === 12030 && e.status === 403 && /nina/.test(e.message) && /record\.find/.test(e.message) && /table:main\/t/.test(e.message));
  });

  it('names resources with stable keys', () => {
    assert.equal(resourceKey({ kind: 'system' }), 'system');
    assert.equal(resourceKey({ kind: 'database', database: 'main' }), 'database:main');
    assert.equal(resourceKey({ kind: 'client', clientName: 'c1' }), 'client:c1');
    assert.equal(resourceKey({ kind: 'role', role: 'r' }), 'role:r');
  });

  it('matches table patterns per name: a * never crosses the / between database and table', () => {
    const catalog = new RoleCatalog([
      { name: 'main_tables', grants: [{ commands: ['record.get'], resources: ['table:main/*', 'database:ma*'] }] },
      { name: 'all_tables', grants: [{ commands: ['record.get'], resources: ['table:*'] }] },
    ]);
    const mainOnly = { account: 'm', roles: ['main_tables'] };
    assert.ok(isAllowed(catalog, mainOnly, 'record.get', table('t')));
    assert.ok(!isAllowed(catalog, mainOnly, 'record.get', table('t', 'main/x')), 'a database an older release let someone call main/x');
    assert.ok(!isAllowed(catalog, mainOnly, 'record.get', { kind: 'database', database: 'main/x' }));
    assert.ok(isAllowed(catalog, mainOnly, 'record.get', { kind: 'database', database: 'mail' }));
    assert.ok(isAllowed(catalog, { account: 'a', roles: ['all_tables'] }, 'record.get', table('t', 'other')));
    assert.throws(() => new RoleCatalog([{ name: 'typo', grants: [], denies: [{ commands: ['*'], resources: ['table:main'] }] }]), (e: EngineError) => e.id === 'INVALID_PARAMETER');
  });

  it('decides a resource with two names on both: grants on both, a deny on either', () => {
    const catalog = new RoleCatalog([
      { name: 'tables', grants: [{ commands: ['record.*'], resources: ['table:main/*'] }] },
      { name: 'topics', grants: [{ commands: ['mq.*'], resources: ['topic:#'] }] },
      { name: 'no_topic', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['mq.retrieve'], resources: ['topic:b/#'] }] },
      { name: 'no_table', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['record.get'], resources: ['table:main/mqtt_msg_b_x'] }] },
    ]);
    const aliases = new ResourceAliases();
    aliases.register((resource) => {
      if (resource.kind === 'topic' && resource.topic === 'b/x') return table('mqtt_msg_b_x');
      if (resource.kind === 'table' && resource.database === 'main' && resource.table === 'mqtt_msg_b_x') return topic('b/x');
      return undefined;
    });
    const who = (...held: string[]) => ({ account: 'x', roles: held });
    const view = table('mqtt_msg_b_x');
    assert.ok(!isAllowed(catalog, who('tables'), 'record.get', view, aliases), 'a table grant alone does not read a topic');
    assert.ok(isAllowed(catalog, who('tables', 'topics'), 'record.get', view, aliases), 'record.get on the table needs mq.retrieve on the topic');
    assert.ok(isAllowed(catalog, who('tables'), 'record.get', table('plain'), aliases));
    assert.ok(isAllowed(catalog, who('topics'), 'mq.retrieve', topic('b/x'), aliases), 'a topic is its own name first');
    assert.ok(!isAllowed(catalog, who('no_topic'), 'record.find', view, aliases), 'a deny on the topic holds for the table');
    assert.ok(isAllowed(catalog, who('no_topic'), 'table.describe', view, aliases), 'only the mapped command is denied');
    assert.ok(!isAllowed(catalog, who('no_table'), 'mq.retrieve', topic('b/x'), aliases), 'a deny on the table holds for the topic');
    assert.ok(!isAllowed(catalog, who('no_table'), 'mq.subscribe', topic('b/x'), aliases));
    assert.ok(isAllowed(catalog, who('no_table'), 'mq.publish', topic('b/x'), aliases));
    assert.ok(isAllowed(catalog, who('no_table'), 'mq.retrieve', topic('b/y'), aliases));
    assert.ok(isAllowed(catalog, who('tables'), 'record.get', view), 'without aliases the table is decided on its own name');
  });

  it('a deny written on every resource (*) holds for a topic through its table name too', () => {
    // The table name of topic b/x is covered by the deny's `*`: a deny on either name holds.
    const catalog = new RoleCatalog([
      { name: 'no_record_reads', grants: [{ commands: ['*'], resources: ['*'] }], denies: [{ commands: ['record.get', 'record.find'], resources: ['*'] }] },
    ]);
    const aliases = new ResourceAliases();
    aliases.register((resource) => {
      if (resource.kind === 'topic' && resource.topic === 'b/x') return table('mqtt_msg_b_x');
      if (resource.kind === 'table' && resource.database === 'main' && resource.table === 'mqtt_msg_b_x') return topic('b/x');
      return undefined;
    });
    const who = { account: 'x', roles: ['no_record_reads'] };
    assert.ok(!isAllowed(catalog, who, 'record.get', table('mqtt_msg_b_x'), aliases), 'the table is refused by its own name');
    assert.ok(!isAllowed(catalog, who, 'mq.retrieve', topic('b/x'), aliases), 'the same messages read as the topic are refused too');
  });

  it('tells whether any role denies by a table name (caches of topic decisions depend on it)', async () => {
    const catalog = new RoleCatalog([{ name: 'topics_only', grants: [], denies: [{ commands: ['*'], resources: ['topic:b/#'] }] }]);
    const map = new Map();
    catalog.open({ get: (k) => map.get(k), put: async (k, v) => { map.set(k, v); }, remove: async (k) => map.delete(k), entries: () => map.entries() });
    assert.equal(catalog.deniesByTableName, false);
    await catalog.create({ name: 'no_table', grants: [], denies: [{ commands: ['record.get'], resources: ['table:main/mqtt_msg_b_x'] }] });
    assert.equal(catalog.deniesByTableName, true);
    await catalog.delete('no_table');
    assert.equal(catalog.deniesByTableName, false);
  });

  it('sees stored roles and their changes at once', async () => {
    const catalog = new RoleCatalog();
    const map = new Map();
    catalog.open({ get: (k) => map.get(k), put: async (k, v) => { map.set(k, v); }, remove: async (k) => map.delete(k), entries: () => map.entries() });
    let changes = 0;
    catalog.onChange(() => changes++);
    const principal = { account: 'x', roles: ['writers'] };
    assert.ok(!isAllowed(catalog, principal, 'record.insert', table('t')));
    await catalog.create({ name: 'Writers', grants: [{ commands: ['record.insert'], resources: ['*'] }] });
    assert.ok(isAllowed(catalog, principal, 'record.insert', table('t')));
    await catalog.alter('writers', { grants: [] });
    assert.ok(!isAllowed(catalog, principal, 'record.insert', table('t')));
    await assert.rejects(catalog.alter('admin', { grants: [] }), (e: EngineError) => e.id === 'ROLE_READ_ONLY');
    await assert.rejects(catalog.create({ name: 'reader', grants: [] }), (e: EngineError) => e.id === 'ROLE_EXISTS');
    await catalog.delete('writers');
    assert.throws(() => catalog.require('writers'), (e: EngineError) => e.id === 'ROLE_NOT_FOUND');
    assert.equal(changes, 3);
    assert.equal(map.size, 0);
  });
});

describe('kernel/auth/topic-filter', () => {
  const matches: Array<[string, string, boolean]> = [
    ['a/b', 'a/b', true], ['a/+', 'a/b', true], ['a/+', 'a/b/c', false], ['a/#', 'a', true], ['a/#', 'a/b/c', true],
    ['#', 'a/b', true], ['+/+', 'a/b', true], ['+', '/a', false], ['#', '$SYS/x', false], ['$SYS/#', '$SYS/x', true],
    ['a/b', 'a/c', false], ['+/b', '/b', true],
  ];
  for (const [filter, name, expected] of matches) {
    it(`${filter} ${expected ? 'matches' : 'does not match'} ${name}`, () => assert.equal(topicMatches(filter, name), expected));
  }
  it('checks names and filters', () => {
    assert.equal(topicNameProblem('a/b'), null);
    assert.match(topicNameProblem('a/+')!, /wildcards/);
    assert.match(topicNameProblem('')!, /empty/);
    assert.equal(topicFilterProblem('a/+/#'), null);
    assert.match(topicFilterProblem('a/#/b')!, /last/);
    assert.match(topicFilterProblem('a/b+')!, /alone/);
  });
  it('compares filters for grants and denies', () => {
    assert.ok(filterCovers('a/#', 'a/+/c'));
    assert.ok(!filterCovers('a/+', 'a/#'));
    assert.ok(filterCovers('+/b', 'x/b'));
    assert.ok(!filterCovers('#', '$SYS/broker/uptime'), '# does not reach $ topics');
    assert.ok(!filterCovers('+/broker/uptime', '$SYS/broker/uptime'));
    assert.ok(filterCovers('$SYS/#', '$SYS/broker/uptime'));
  });
});
