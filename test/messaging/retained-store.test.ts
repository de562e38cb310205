/** RetainedStore: retained topics found by MQTT filter and listed in order for paging. */
import assert from 'node:assert/strict';
import { RetainedStore } from '../../plugins/messaging/retained-store';

interface Entry {
  sequence: number;
  qos: number;
}

const TOPICS = [
  'sport',
  'sport/',
  'sport/tennis',
  'sport/tennis/player1',
  'sport/tennis/player1/ranking',
  'sport/tennis/player1/score/wimbledon',
  'sport/tennis/player2',
  'sport/$x',
  '/finance',
  'finance',
  '/',
  '$SYS',
  '$SYS/monitor/Clients',
  '$SYS/broker/uptime',
];

function storeOf(topics: readonly string[]): RetainedStore<Entry> {
  const store = new RetainedStore<Entry>();
  topics.forEach((topic, index) => store.set(topic, { sequence: index + 1, qos: 0 }));
  return store;
}

function matched(store: RetainedStore<Entry>, filter: string): string[] {
  return [...store.match(filter)].map(([topic]) => topic).sort();
}

describe('RetainedStore', () => {
  describe('match (MQTT §4.7.1.2, §4.7.1.3, §4.7.2)', () => {
    const cases: Array<[filter: string, expected: string[]]> = [
      ['sport/tennis/player1/#', ['sport/tennis/player1', 'sport/tennis/player1/ranking', 'sport/tennis/player1/score/wimbledon']],
      ['sport/#', ['sport', 'sport/', 'sport/$x', 'sport/tennis', 'sport/tennis/player1', 'sport/tennis/player1/ranking', 'sport/tennis/player1/score/wimbledon', 'sport/tennis/player2']],
      ['sport/tennis/+', ['sport/tennis/player1', 'sport/tennis/player2']],
      ['sport/+', ['sport/', 'sport/$x', 'sport/tennis']],
      ['+/+', ['/', '/finance', 'sport/', 'sport/$x', 'sport/tennis']],
      ['/+', ['/', '/finance']],
      ['+', ['finance', 'sport']],
      ['#', TOPICS.filter((t) => !t.startsWith('$'))],
      ['$SYS/#', ['$SYS', '$SYS/broker/uptime', '$SYS/monitor/Clients']],
      ['$SYS/monitor/+', ['$SYS/monitor/Clients']],
      ['+/monitor/Clients', []],
      ['sport/+/player1', ['sport/tennis/player1']],
      ['sport/tennis', ['sport/tennis']],
      ['Sport/tennis', []],
      ['nothing/#', []],
      ['sport/tennis/player1/score/wimbledon/#', ['sport/tennis/player1/score/wimbledon']],
    ];
    for (const [filter, expected] of cases) {
      it(`${JSON.stringify(filter)} → ${expected.length} topics`, () => {
        assert.deepEqual(matched(storeOf(TOPICS), filter), [...expected].sort());
      });
    }

    it('yields the entries with their topics', () => {
      const store = storeOf(TOPICS);
      assert.deepEqual([...store.match('sport/tennis')], [['sport/tennis', { sequence: 3, qos: 0 }]]);
    });
  });

  it('sets, replaces, gets and deletes', () => {
    const store = new RetainedStore<Entry>();
    store.set('a/b', { sequence: 1, qos: 0 });
    store.set('a/b', { sequence: 7, qos: 1 });
    store.set('a', { sequence: 2, qos: 0 });
    assert.equal(store.size, 2);
    assert.deepEqual(store.get('a/b'), { sequence: 7, qos: 1 });
    assert.deepEqual(matched(store, 'a/#'), ['a', 'a/b']);
    assert.equal(store.delete('a/b'), true);
    assert.equal(store.delete('a/b'), false);
    assert.equal(store.get('a/b'), undefined);
    assert.equal(store.size, 1);
    assert.deepEqual(matched(store, 'a/#'), ['a']);
    assert.deepEqual(matched(store, 'a/+'), []);
    assert.equal(store.delete('a'), true);
    assert.deepEqual(matched(store, '#'), []);
    assert.deepEqual(store.list(), []);
    store.set('a/b/c', { sequence: 3, qos: 0 });
    assert.deepEqual(matched(store, '#'), ['a/b/c']);
  });

  it('keeps a parent topic when a child is deleted, and the reverse', () => {
    const store = storeOf(['x', 'x/y/z']);
    store.delete('x/y/z');
    assert.deepEqual(matched(store, '#'), ['x']);
    store.set('x/y/z', { sequence: 9, qos: 0 });
    store.delete('x');
    assert.deepEqual(matched(store, '#'), ['x/y/z']);
    assert.deepEqual(matched(store, 'x/+/z'), ['x/y/z']);
  });

  describe('list', () => {
    const store = storeOf(TOPICS);
    const sorted = [...TOPICS].sort();

    it('lists everything in topic order', () => {
      assert.deepEqual(store.list().map(([t]) => t), sorted);
      assert.deepEqual(store.list(undefined, 3).map(([t]) => t), sorted.slice(0, 3));
    });

    it('lists by prefix', () => {
      assert.deepEqual(store.list('sport/tennis').map(([t]) => t), sorted.filter((t) => t.startsWith('sport/tennis')));
      assert.deepEqual(store.list('sport/tennis', 2).map(([t]) => t), ['sport/tennis', 'sport/tennis/player1']);
      assert.deepEqual(store.list('zzz'), []);
    });

    it('lists by filter when the argument has wildcards', () => {
      assert.deepEqual(store.list('sport/+').map(([t]) => t), ['sport/', 'sport/$x', 'sport/tennis']);
      assert.deepEqual(store.list('#', 2).map(([t]) => t), ['/', '/finance']);
    });

    it('pages with `after`', () => {
      const pages: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = store.list(undefined, 4, after);
        if (page.length === 0) break;
        pages.push(...page.map(([t]) => t));
        after = page[page.length - 1][0];
      }
      assert.deepEqual(pages, sorted);
      assert.deepEqual(store.list('sport/', 2, 'sport/tennis').map(([t]) => t), ['sport/tennis/player1', 'sport/tennis/player1/ranking']);
      assert.deepEqual(store.list('sport/tennis/#', 10, 'sport/tennis/player1/ranking').map(([t]) => t), ['sport/tennis/player1/score/wimbledon', 'sport/tennis/player2']);
      assert.deepEqual(store.list('sport/', 10, 'a').map(([t]) => t), sorted.filter((t) => t.startsWith('sport/')));
    });

    it('sees topics added and removed after a listing', () => {
      const changing = storeOf(['b', 'd']);
      assert.deepEqual(changing.list().map(([t]) => t), ['b', 'd']);
      changing.set('c', { sequence: 5, qos: 0 });
      changing.delete('b');
      assert.deepEqual(changing.list(), [['c', { sequence: 5, qos: 0 }], ['d', { sequence: 2, qos: 0 }]]);
    });
  });

  it('matches among 100,000 retained topics by walking levels', () => {
    const store = new RetainedStore<Entry>();
    const count = 100_000;
    for (let i = 0; i < count; i++) store.set(`devices/${i % 1000}/sensor${Math.floor(i / 1000)}/value`, { sequence: i + 1, qos: 0 });
    assert.equal(store.size, count);
    for (let probe = 0; probe < 1000; probe++) {
      const device = (probe * 37) % 1000;
      const found = [...store.match(`devices/${device}/+/value`)];
      assert.equal(found.length, 100);
      assert.ok(found.every(([topic, entry]) => topic.startsWith(`devices/${device}/`) && (entry.sequence - 1) % 1000 === device));
    }
    assert.deepEqual([...store.match('devices/5/sensor7/value')], [['devices/5/sensor7/value', { sequence: 7005 + 1, qos: 0 }]]);
    assert.equal([...store.match('devices/+/sensor3/#')].length, 1000);
    assert.equal([...store.match('#')].length, count);
    assert.equal(store.list('devices/9', 50).length, 50);
  });
});
