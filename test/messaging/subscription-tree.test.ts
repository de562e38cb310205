/** SubscriptionTree: MQTT filter matching, shared groups, replace, cache invalidation, scale. */
import assert from 'node:assert/strict';
import {
  SubscriptionTree,
  pickMember,
  type TopicMatches,
} from '../../plugins/messaging/subscription-tree';
import { parseSharedFilter, topicFilterProblem } from '../../kernel/auth/topic-filter';
import { topicNameProblem } from '../../kernel/topic-name';

interface Options {
  qos: number;
}

/** The filters of the direct matches, sorted (order is not part of the contract). */
function directFilters(matches: TopicMatches<string, Options>): string[] {
  return matches.direct.map((m) => `${m.subscriber}:${m.filter}`).sort();
}

function matchesOne(filter: string, topic: string): boolean {
  const tree = new SubscriptionTree<string, Options>();
  tree.add('c', filter, { qos: 0 });
  return tree.match(topic).direct.length === 1;
}

describe('SubscriptionTree', () => {
  describe('matching one filter (MQTT §4.7.1.2, §4.7.1.3, §4.7.2)', () => {
    const cases: Array<[filter: string, topic: string, matches: boolean]> = [
      // §4.7.1.2 multi-level wildcard
      ['sport/tennis/player1/#', 'sport/tennis/player1', true],
      ['sport/tennis/player1/#', 'sport/tennis/player1/ranking', true],
      ['sport/tennis/player1/#', 'sport/tennis/player1/score/wimbledon', true],
      ['sport/tennis/player1/#', 'sport/tennis/player2', false],
      ['sport/tennis/player1/#', 'sport/tennis', false],
      ['sport/#', 'sport', true],
      ['sport/#', 'sport/', true],
      ['#', 'sport/tennis/player1', true],
      ['#', '/', true],
      // §4.7.1.3 single-level wildcard
      ['sport/tennis/+', 'sport/tennis/player1', true],
      ['sport/tennis/+', 'sport/tennis/player2', true],
      ['sport/tennis/+', 'sport/tennis/player1/ranking', false],
      ['sport/+', 'sport', false],
      ['sport/+', 'sport/', true], // `+` matches an empty level
      ['+/+', '/finance', true],
      ['/+', '/finance', true],
      ['+', '/finance', false],
      ['+', 'finance', true],
      ['+/tennis/#', 'sport/tennis/player1', true],
      ['sport/+/player1', 'sport/tennis/player1', true],
      ['sport/+/player1', 'sport/tennis/player2', false],
      // exact and case
      ['sport/tennis', 'sport/tennis', true],
      ['sport/tennis', 'Sport/tennis', false],
      ['sport/tennis', 'sport/tennis/', false],
      ['/', '/', true],
      // §4.7.2 topics beginning with `$` [MQTT-4.7.2-1]
      ['#', '$SYS/x', false],
      ['#', '$SYS', false],
      ['+', '$SYS', false],
      ['+/monitor/Clients', '$SYS/monitor/Clients', false],
      ['$SYS/#', '$SYS/monitor/Clients', true],
      ['$SYS/#', '$SYS', true],
      ['$SYS/monitor/+', '$SYS/monitor/Clients', true],
      ['$SYS/+/Clients', '$SYS/monitor/Clients', true],
      ['sport/#', 'sport/$x', true], // only the first level is special
    ];
    for (const [filter, topic, expected] of cases) {
      it(`${JSON.stringify(filter)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(topic)}`, () => {
        assert.equal(matchesOne(filter, topic), expected);
      });
    }
  });

  it('collects every matching filter, a subscriber once per overlapping filter', () => {
    const tree = new SubscriptionTree<string, Options>();
    tree.add('a', 'sport/#', { qos: 0 });
    tree.add('a', 'sport/tennis/+', { qos: 1 });
    tree.add('b', '#', { qos: 2 });
    tree.add('c', 'sport/tennis/player1', { qos: 0 });
    tree.add('d', 'finance/#', { qos: 0 });
    const matches = tree.match('sport/tennis/player1');
    assert.deepEqual(directFilters(matches), ['a:sport/#', 'a:sport/tennis/+', 'b:#', 'c:sport/tennis/player1']);
    const entry = matches.direct.find((m) => m.filter === 'sport/tennis/+');
    assert.deepEqual(entry, { subscriber: 'a', filter: 'sport/tennis/+', options: { qos: 1 } });
    assert.deepEqual(matches.groups, []);
  });

  it('replaces a subscription on the same exact filter [MQTT-3.8.4-3]', () => {
    const tree = new SubscriptionTree<string, Options>();
    assert.equal(tree.add('a', 'x/+', { qos: 0 }), false);
    assert.equal(tree.add('a', 'x/+', { qos: 2 }), true);
    assert.equal(tree.add('b', 'x/+', { qos: 1 }), false, 'another subscriber on the same filter is no replace');
    assert.equal(tree.add('a', 'x/#', { qos: 1 }), false, 'an overlapping filter is no replace');
    assert.equal(tree.size, 3);
    const matches = tree.match('x/y');
    assert.deepEqual(
      matches.direct.filter((m) => m.subscriber === 'a').map((m) => [m.filter, m.options.qos]).sort(),
      [['x/#', 1], ['x/+', 2]],
    );
  });

  it('removes one filter, all filters of a subscriber, and prunes', () => {
    const tree = new SubscriptionTree<string, Options>();
    tree.add('a', 'x/+', { qos: 0 });
    tree.add('a', 'x/#', { qos: 0 });
    tree.add('a', '$share/g/x/+', { qos: 0 });
    tree.add('b', 'x/+', { qos: 0 });
    assert.equal(tree.remove('a', 'x/y'), false);
    assert.equal(tree.remove('c', 'x/+'), false);
    assert.equal(tree.remove('a', 'x/+'), true);
    assert.equal(tree.remove('a', 'x/+'), false);
    assert.equal(tree.size, 3);
    assert.deepEqual(directFilters(tree.match('x/y')), ['a:x/#', 'b:x/+']);
    tree.removeAll('a');
    assert.equal(tree.size, 1);
    assert.deepEqual(tree.filtersOf('a'), []);
    const matches = tree.match('x/y');
    assert.deepEqual(directFilters(matches), ['b:x/+']);
    assert.deepEqual(matches.groups, []);
    tree.removeAll('b');
    assert.equal(tree.size, 0);
    const none = tree.match('x/y');
    assert.deepEqual([none.direct, none.groups], [[], []]);
  });

  it('lists a subscriber\'s filters with their options', () => {
    const tree = new SubscriptionTree<string, Options>();
    tree.add('a', 'x/+', { qos: 0 });
    tree.add('a', '$share/g/y/#', { qos: 1 });
    tree.add('a', 'x/+', { qos: 2 });
    tree.add('b', 'z', { qos: 0 });
    assert.deepEqual(tree.filtersOf('a'), [
      { filter: 'x/+', options: { qos: 2 } },
      { filter: '$share/g/y/#', options: { qos: 1 } },
    ]);
  });

  describe('cache', () => {
    it('returns the same result, its lists frozen, until a change; its generation tells whether it still holds', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', 'x/+', { qos: 0 });
      const first = tree.match('x/y');
      assert.equal(tree.match('x/y'), first);
      assert.ok(Object.isFrozen(first.direct) && Object.isFrozen(first.groups));
      assert.ok(Object.isFrozen(first.direct[0]));
      assert.throws(() => (first.direct as unknown[]).push({}));
      assert.equal(first.generation, tree.generation);
      tree.add('b', 'z', { qos: 0 });
      assert.notEqual(first.generation, tree.generation, 'any change makes earlier matches stale');
      assert.notEqual(tree.match('x/y'), first);
    });

    it('is invalidated by add, remove and removeAll', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', 'x/+', { qos: 0 });
      assert.deepEqual(directFilters(tree.match('x/y')), ['a:x/+']);
      tree.add('b', 'x/y', { qos: 0 });
      assert.deepEqual(directFilters(tree.match('x/y')), ['a:x/+', 'b:x/y']);
      tree.add('a', 'x/+', { qos: 2 });
      assert.equal(tree.match('x/y').direct.find((m) => m.subscriber === 'a')?.options.qos, 2);
      tree.add('c', '$share/g/x/#', { qos: 0 });
      assert.equal(tree.match('x/y').groups.length, 1);
      tree.remove('b', 'x/y');
      assert.deepEqual(directFilters(tree.match('x/y')), ['a:x/+']);
      tree.removeAll('c');
      assert.equal(tree.match('x/y').groups.length, 0);
      tree.removeAll('a');
      assert.deepEqual(directFilters(tree.match('x/y')), []);
    });

    it('keeps working past its bound', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', 't/+', { qos: 0 });
      for (let i = 0; i < 10_050; i++) assert.equal(tree.match(`t/${i}`).direct.length, 1);
      assert.equal(tree.match('t/0').direct.length, 1);
      assert.equal(tree.match('u/0').direct.length, 0);
    });
  });

  describe('shared subscriptions (MQTT 5 §4.8.2)', () => {
    it('groups subscribers by (share name, filter), apart from direct matches', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', '$share/g1/sensors/+', { qos: 1 });
      tree.add('b', '$share/g1/sensors/+', { qos: 0 });
      tree.add('c', '$share/g2/sensors/+', { qos: 0 });
      tree.add('d', '$share/g1/sensors/#', { qos: 0 });
      tree.add('e', 'sensors/+', { qos: 0 });
      tree.add('f', '$share/g1/other', { qos: 0 });
      const matches = tree.match('sensors/t1');
      assert.deepEqual(directFilters(matches), ['e:sensors/+']);
      const groups = matches.groups
        .map((g) => ({ share: g.share, filter: g.filter, members: g.members.map((m) => m.subscriber) }))
        .sort((x, y) => `${x.share} ${x.filter}`.localeCompare(`${y.share} ${y.filter}`));
      assert.deepEqual(groups, [
        { share: 'g1', filter: 'sensors/#', members: ['d'] },
        { share: 'g1', filter: 'sensors/+', members: ['a', 'b'] },
        { share: 'g2', filter: 'sensors/+', members: ['c'] },
      ]);
      const g1 = matches.groups.find((g) => g.share === 'g1' && g.filter === 'sensors/+');
      assert.deepEqual(g1?.members[0], { subscriber: 'a', options: { qos: 1 } });
    });

    it('applies the `$` rule to the filter part', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', '$share/g/#', { qos: 0 });
      tree.add('b', '$share/g/$SYS/#', { qos: 0 });
      assert.deepEqual(tree.match('$SYS/x').groups.map((g) => g.filter), ['$SYS/#']);
      assert.deepEqual(tree.match('x').groups.map((g) => g.filter), ['#']);
    });

    it('replaces a member in place and keeps one entry per subscriber', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', '$share/g/x', { qos: 0 });
      tree.add('b', '$share/g/x', { qos: 0 });
      assert.equal(tree.add('a', '$share/g/x', { qos: 2 }), true);
      assert.equal(tree.add('a', 'x', { qos: 0 }), false, 'a plain filter is another subscription');
      const [group] = tree.match('x').groups;
      assert.deepEqual(group.members, [{ subscriber: 'a', options: { qos: 2 } }, { subscriber: 'b', options: { qos: 0 } }]);
      assert.equal(tree.size, 3);
    });

    it('keeps the group object (and its cursor) across unrelated changes', () => {
      const tree = new SubscriptionTree<string, Options>();
      tree.add('a', '$share/g/x', { qos: 0 });
      tree.add('b', '$share/g/x', { qos: 0 });
      const [before] = tree.match('x').groups;
      assert.equal(pickMember(before, () => true)?.subscriber, 'a');
      tree.add('z', 'other', { qos: 0 });
      const [after] = tree.match('x').groups;
      assert.equal(after, before);
      assert.equal(pickMember(after, () => true)?.subscriber, 'b');
    });

    it('pickMember goes round robin and prefers online members', () => {
      const tree = new SubscriptionTree<string, Options>();
      for (const s of ['a', 'b', 'c']) tree.add(s, '$share/g/x', { qos: 0 });
      const [group] = tree.match('x').groups;
      const pick = (online: (s: string) => boolean): string | undefined => pickMember(group, online)?.subscriber;
      assert.deepEqual([pick(() => true), pick(() => true), pick(() => true), pick(() => true)], ['a', 'b', 'c', 'a']);
      const onlyC = (s: string): boolean => s === 'c';
      assert.deepEqual([pick(onlyC), pick(onlyC)], ['c', 'c']);
      const nobody = (): boolean => false;
      assert.deepEqual([pick(nobody), pick(nobody), pick(nobody)], ['a', 'b', 'c'], 'offline members still take turns');
      tree.removeAll('a');
      tree.removeAll('b');
      tree.removeAll('c');
      assert.equal(tree.match('x').groups.length, 0);
      assert.equal(pickMember({ share: 'g', filter: 'x', members: [], cursor: 0 }, () => true), undefined);
    });

    it('parses shared filters', () => {
      assert.deepEqual(parseSharedFilter('$share/g/a/b'), { share: 'g', filter: 'a/b' });
      assert.deepEqual(parseSharedFilter('$share/g//'), { share: 'g', filter: '/' });
      assert.equal(parseSharedFilter('a/b'), null);
      assert.equal(parseSharedFilter('$shared/g/a'), null);
      assert.equal(parseSharedFilter('$share'), null);
    });
  });

  describe('validation', () => {
    const valid = ['a', '/', '#', '+', 'a/+/b', 'a/#', '$SYS/#', '$share/g/a/#', '$share/g/+', '$share/g//', '$share'];
    const invalid = ['', 'a/b#', 'a/#/b', 'a+', '$share/', '$share/g', '$share/g/', '$share//a', '$share/g+/a', '$share/#/a', '$share/g/a#', 'a\u0000'];
    for (const filter of valid) it(`accepts ${JSON.stringify(filter)}`, () => assert.equal(topicFilterProblem(filter), null));
    for (const filter of invalid) {
      it(`rejects ${JSON.stringify(filter)}`, () => {
        assert.equal(typeof topicFilterProblem(filter), 'string');
        assert.throws(() => new SubscriptionTree<string, Options>().add('a', filter, { qos: 0 }), RangeError);
      });
    }
    it('re-exports the topic name check', () => {
      assert.equal(topicNameProblem('a/b'), null);
      assert.equal(typeof topicNameProblem('a/+'), 'string');
    });
  });

  it('matches among 100,000 subscriptions by walking levels', () => {
    const tree = new SubscriptionTree<number, Options>();
    const count = 100_000;
    for (let i = 0; i < count; i++) tree.add(i, `devices/${i}/+/status`, { qos: 0 });
    tree.add(count, 'devices/#', { qos: 1 });
    tree.add(count + 1, '$share/workers/devices/+/+/status', { qos: 0 });
    tree.add(count + 2, '+/+/+/+', { qos: 0 });
    assert.equal(tree.size, count + 3);
    for (let probe = 0; probe < 1000; probe++) {
      const device = (probe * 97) % count;
      const matches = tree.match(`devices/${device}/door/status`);
      assert.deepEqual(matches.direct.map((m) => m.subscriber).sort((a, b) => a - b), [device, count, count + 2]);
      assert.equal(matches.groups.length, 1);
    }
    assert.deepEqual(tree.match(`devices/${count}/door/status`).direct.map((m) => m.subscriber).sort((a, b) => a - b), [count, count + 2]);
    for (let i = 0; i < count; i += 2) tree.remove(i, `devices/${i}/+/status`);
    assert.equal(tree.size, count / 2 + 3);
    assert.deepEqual(tree.match('devices/4/door/status').direct.map((m) => m.subscriber).sort((a, b) => a - b), [count, count + 2]);
    assert.deepEqual(tree.match('devices/5/door/status').direct.map((m) => m.subscriber).sort((a, b) => a - b), [5, count, count + 2]);
  });
});
