import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server';
import { fails, ok, restClient, startRestServer, type RestClient } from './rest-client';

const PEOPLE = [
  { name: 'Ann', age: 30, city: 'Oslo', doc: { city: 'Oslo', zip: 5 } },
  { name: 'Bob', age: 40, city: 'Rome', doc: { city: 'Rome', zip: 3 } },
  { name: 'Cy', age: 50, city: 'Oslo', doc: { city: 'Oslo', zip: 9 } },
  { name: 'Dee', age: 20, city: 'Bonn', doc: { city: 'Bonn', zip: 1 } },
  { name: 'Eve', age: 40, city: 'Bonn', doc: { city: 'Bonn', zip: 7 } },
  { name: 'Abe', age: 60, city: 'Rome', doc: { city: 'Rome', zip: 2 } },
];

describe('REST queries', () => {
  let server: TestServer;
  let rest: RestClient;
  let ids: Record<string, number>;

  /** POSTs a query and returns the names of the records found. */
  async function names(index: string, body: unknown, query = 'top=100'): Promise<string[]> {
    const result = ok(await rest.post(`/query/main/people/${index}?${query}`, body));
    return result._records.map((record: { name: string }) => record.name);
  }

  const find = (field: string, condition: Record<string, unknown>) => ({ find: { [field]: condition } });

  before(async () => {
    server = await startRestServer();
    rest = restClient(server.http);
    ok(await rest.post('/table/main/people', {
      fields: [
        { name: 'name', type: 'varchar', length: 10 },
        { name: 'age', type: 'integer' },
        { name: 'city', type: 'varchar', length: 10 },
        { name: 'doc', type: 'json' },
      ],
    }));
    const created = ok(await rest.post('/record/main/people', PEOPLE))._ids as number[];
    ids = Object.fromEntries(PEOPLE.map((p, i) => [p.name, created[i]]));
    ok(await rest.post('/index/main/people/by_name', { fields: [{ name: 'name' }], unique: true }));
    ok(await rest.post('/index/main/people/by_age', { fields: [{ name: 'age' }] }));
    ok(await rest.post('/index/main/people/by_age_desc', { fields: [{ name: 'age', ascending: false }] }));
    ok(await rest.post('/index/main/people/by_city_age', { fields: [{ name: 'city' }, { name: 'age', ascending: false }] }));
    ok(await rest.post('/index/main/people/by_doc_city', { fields: [{ name: 'doc', key: 'city', type: 'varchar', size: 10 }, { name: 'name' }] }));
  });
  after(() => server.close());

  it('returns {_records: [{_id, ...declared columns}]}', async () => {
    const result = ok(await rest.post('/query/main/people/by_name?top=1', find('name', { operator: '=', value: 'Bob' })));
    assert.deepEqual(result, { _records: [{ _id: ids.Bob, name: 'Bob', age: 40, city: 'Rome', doc: { city: 'Rome', zip: 3 } }] });
  });

  describe('find operators on an ascending index', () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['<', { operator: '<', value: 40 }, ['Dee', 'Ann']],
      ['<=', { operator: '<=', value: 40 }, ['Dee', 'Ann', 'Bob', 'Eve']],
      ['=', { operator: '=', value: 40 }, ['Bob', 'Eve']],
      ['==', { operator: '==', value: 40 }, ['Bob', 'Eve']],
      ['>=', { operator: '>=', value: 50 }, ['Cy', 'Abe']],
      ['>', { operator: '>', value: 50 }, ['Abe']],
      ['between inclusive', { operator: 'between', lowervalue: 30, uppervalue: 50 }, ['Ann', 'Bob', 'Eve', 'Cy']],
      ['between exclusive', { operator: 'between', excludelowervalue: 30, excludeuppervalue: 50 }, ['Bob', 'Eve']],
      ['between lower inclusive, upper exclusive', { operator: 'between', lowervalue: 30, excludeuppervalue: 50 }, ['Ann', 'Bob', 'Eve']],
      ['between lower only', { operator: 'between', excludelowervalue: 40 }, ['Cy', 'Abe']],
      ['between upper only', { operator: 'between', uppervalue: 20 }, ['Dee']],
      ['an operator plus a bound on the other side', { operator: '>=', value: 30, excludeuppervalue: 50 }, ['Ann', 'Bob', 'Eve']],
    ];
    for (const [label, condition, expected] of cases) {
      it(label, async () => {
        assert.deepEqual(await names('by_age', find('age', condition)), expected);
      });
    }
  });

  describe('find operators on a descending index (largest first, values still compare as values)', () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['<', { operator: '<', value: 40 }, ['Ann', 'Dee']],
      ['<=', { operator: '<=', value: 40 }, ['Bob', 'Eve', 'Ann', 'Dee']],
      ['=', { operator: '=', value: 40 }, ['Bob', 'Eve']],
      ['>=', { operator: '>=', value: 50 }, ['Abe', 'Cy']],
      ['>', { operator: '>', value: 50 }, ['Abe']],
      ['between', { operator: 'between', lowervalue: 30, excludeuppervalue: 50 }, ['Bob', 'Eve', 'Ann']],
      ['between exclusive lower', { operator: 'between', excludelowervalue: 30, uppervalue: 50 }, ['Cy', 'Bob', 'Eve']],
    ];
    for (const [label, condition, expected] of cases) {
      it(label, async () => {
        assert.deepEqual(await names('by_age_desc', find('age', condition)), expected);
      });
    }
  });

  it('matches a string prefix with between lowervalue / excludeuppervalue', async () => {
    assert.deepEqual(await names('by_name', find('name', { operator: 'between', lowervalue: 'A', excludeuppervalue: 'B' })), ['Abe', 'Ann']);
  });

  it('finds on the first field of a compound index, in index order (second segment descending)', async () => {
    assert.deepEqual(await names('by_city_age', find('city', { operator: '=', value: 'Oslo' })), ['Cy', 'Ann']);
    assert.deepEqual(await names('by_city_age', find('city', { operator: '>=', value: 'Oslo' })), ['Cy', 'Ann', 'Abe', 'Bob']);
  });

  it('applies reverse, then skip, then top', async () => {
    const all = find('age', { operator: '>=', value: 0 });
    assert.deepEqual(await names('by_age', all), ['Dee', 'Ann', 'Bob', 'Eve', 'Cy', 'Abe']);
    assert.deepEqual(await names('by_age', { ...all, reverse: true }), ['Abe', 'Cy', 'Eve', 'Bob', 'Ann', 'Dee']);
    assert.deepEqual(await names('by_age', all, 'top=2&skip=1'), ['Ann', 'Bob']);
    assert.deepEqual(await names('by_age', { ...all, reverse: true }, 'top=2&skip=1'), ['Cy', 'Eve']);
    assert.deepEqual(await names('by_age', all, 'top=2'), ['Dee', 'Ann']);
    assert.deepEqual(await names('by_age', all, 'top=5&skip=10'), []);
  });

  it('returns only the selected columns (and _id)', async () => {
    const result = ok(await rest.post('/query/main/people/by_name?top=2', { ...find('name', { operator: '>=', value: 'A' }), select: ['age'] }));
    assert.deepEqual(result._records, [{ _id: ids.Abe, age: 60 }, { _id: ids.Ann, age: 30 }]);
    fails(await rest.post('/query/main/people/by_name?top=2', { ...find('name', { operator: '>=', value: 'A' }), select: ['planet'] }), 400, 4014);
  });

  it('applies a filter on columns outside the index', async () => {
    assert.deepEqual(await names('by_age', { ...find('age', { operator: '>=', value: 0 }), filter: 'city == "Oslo"' }), ['Ann', 'Cy']);
    assert.deepEqual(await names('by_age', { ...find('age', { operator: '>=', value: 0 }), filter: "city = 'Bonn' and age > 20" }), ['Eve']);
    assert.deepEqual(await names('by_age', { ...find('age', { operator: '>=', value: 0 }), filter: 'city == "Oslo"' }, 'top=1&skip=1'), ['Cy']);
  });

  it('answers 400 with the position for a bad filter', async () => {
    fails(await rest.post('/query/main/people/by_age?top=5', { ...find('age', { operator: '>', value: 0 }), filter: 'city == ' }), 400, 4072, /position \d+/);
    fails(await rest.post('/query/main/people/by_age?top=5', { ...find('age', { operator: '>', value: 0 }), filter: 'planet == 1' }), 400, undefined, /planet/);
  });

  describe('advanced_find', () => {
    it('find_set: records whose leading segments start with the values (length in key bytes)', async () => {
      const body = (length: number, fields: Record<string, unknown>) => ({ advanced_find: { find_set: { length, fields } } });
      assert.deepEqual(await names('by_city_age', body(10, { city: 'Oslo' })), ['Cy', 'Ann']);
      assert.deepEqual(await names('by_city_age', body(1, { city: 'Oslo' })), ['Cy', 'Ann']);
      assert.deepEqual(await names('by_city_age', body(1, { city: 'R' })), ['Abe', 'Bob']);
      assert.deepEqual(await names('by_name', body(1, { name: 'A' })), ['Abe', 'Ann']);
      // city is varchar(10): its segment holds 40 bytes (4 per character), then age's 4 bytes.
      assert.deepEqual(await names('by_city_age', body(44, { city: 'Bonn', age: 40 })), ['Eve']);
      assert.deepEqual(await names('by_city_age', body(40, { city: 'Bonn', age: 40 })), ['Eve', 'Dee']);
      assert.deepEqual(await names('by_city_age', { ...body(10, { city: 'Oslo' }), reverse: true }), ['Ann', 'Cy']);
    });

    it('find_record: compares a full key', async () => {
      const body = (operator: string, fields: Record<string, unknown>) => ({ advanced_find: { find_record: { operator, fields } } });
      assert.deepEqual(await names('by_city_age', body('=', { city: 'Bonn', age: 40 })), ['Eve']);
      assert.deepEqual(await names('by_city_age', body('>=', { city: 'Oslo', age: 30 })), ['Ann', 'Abe', 'Bob']);
      assert.deepEqual(await names('by_city_age', body('>', { city: 'Oslo', age: 30 })), ['Abe', 'Bob']);
      assert.deepEqual(await names('by_city_age', body('<', { city: 'Bonn', age: 20 })), ['Eve']);
      assert.deepEqual(await names('by_city_age', body('<=', { city: 'Bonn', age: 20 })), ['Eve', 'Dee']);
      assert.deepEqual(await names('by_name', body('>', { name: 'Cy' })), ['Dee', 'Eve']);
    });

    it('rejects bad advanced_find bodies with 400', async () => {
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: {} }), 400);
      fails(await rest.post('/query/main/people/by_city_age?top=5', {
        advanced_find: { find_set: { length: 1, fields: { city: 'A' } }, find_record: { operator: '=', fields: { city: 'A', age: 1 } } },
      }), 400);
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: { find_set: { fields: { city: 'A' } } } }), 400, 12025);
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: { find_set: { length: 1, fields: { age: 1 } } } }), 400, 4073, /city/);
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: { find_set: { length: 1, fields: { name: 'x' } } } }), 400, 4073, /name/);
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: { find_record: { operator: '=', fields: { city: 'Oslo' } } } }), 400, 4073, /age/);
      fails(await rest.post('/query/main/people/by_city_age?top=5', { advanced_find: { find_record: { operator: 'like', fields: { city: 'Oslo', age: 1 } } } }), 400);
    });
  });

  it('queries an index on a JSON property, naming the segment by its key', async () => {
    assert.deepEqual(await names('by_doc_city', find('city', { operator: '=', value: 'Bonn' })), ['Dee', 'Eve']);
    assert.deepEqual(await names('by_doc_city', find('doc', { operator: '>', value: 'Oslo' })), ['Abe', 'Bob']);
    assert.deepEqual(await names('by_doc_city', { advanced_find: { find_record: { operator: '=', fields: { city: 'Rome', name: 'Bob' } } } }), ['Bob']);
    assert.deepEqual(await names('by_doc_city', { advanced_find: { find_set: { length: 2, fields: { city: 'Os' } } } }), ['Ann', 'Cy']);
  });

  describe('bad input', () => {
    const good = find('age', { operator: '>', value: 0 });

    it('top missing, 0, negative or not an integer; skip negative → 400', async () => {
      for (const query of ['', 'top=0', 'top=-1', 'top=1.5', 'top=abc', 'top=5&skip=-1', 'top=5&skip=x']) {
        fails(await rest.post(`/query/main/people/by_age?${query}`, good), 400, undefined, /top|skip/);
      }
    });

    it('a body that is missing, malformed or of the wrong shape → 400', async () => {
      fails(await rest.post('/query/main/people/by_age?top=5'), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', '{"find": '), 400, 12009);
      fails(await rest.post('/query/main/people/by_age?top=5', '[]'), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', {}), 400, 4073, /exactly one/);
      fails(await rest.post('/query/main/people/by_age?top=5', { ...good, advanced_find: { find_set: { length: 1, fields: { age: 1 } } } }), 400, 4073, /exactly one/);
      fails(await rest.post('/query/main/people/by_age?top=5', { find: {} }), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', { find: { age: { operator: '>', value: 1 }, name: { operator: '>', value: 'a' } } }), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', { ...good, reverse: 'yes' }), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', { ...good, select: 'name' }), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', { ...good, filter: 7 }), 400);
    });

    it('the find key must be the first field of the index', async () => {
      fails(await rest.post('/query/main/people/by_age?top=5', find('name', { operator: '>', value: 'a' })), 400, 4073, /first field/);
      fails(await rest.post('/query/main/people/by_city_age?top=5', find('age', { operator: '>', value: 1 })), 400, 4073, /first field/);
    });

    it('operators and bounds: unknown operator, missing value, mutually exclusive bounds → 400', async () => {
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: 'like', value: 1 })), 400);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { value: 1 })), 400, 12025);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: '>' })), 400, 12025);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: 'between' })), 400, 4073);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: 'between', lowervalue: 1, excludelowervalue: 2 })), 400, 4073, /mutually exclusive/);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: 'between', uppervalue: 1, excludeuppervalue: 2 })), 400, 4073, /mutually exclusive/);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: '>=', value: 1, lowervalue: 2 })), 400, 4073);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: '>', value: 1, extra: 2 })), 400);
    });

    it('a value of the wrong type → 400', async () => {
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: '>', value: 'old' })), 400, 4031);
      fails(await rest.post('/query/main/people/by_age?top=5', find('age', { operator: '>', value: { a: 1 } })), 400);
    });

    it('unknown database, table or index → 404', async () => {
      fails(await rest.post('/query/main/people/by_nothing?top=5', good), 404, 4045);
      fails(await rest.post('/query/main/nothing/by_age?top=5', good), 404, 4023);
      fails(await rest.post('/query/nodb/people/by_age?top=5', good), 404, 4094);
    });
  });

  describe('one command per query', () => {
    it('runs one authorization (and so one command) for a query', async () => {
      const engine = server.engine;
      const original = engine.authorize;
      const seen: string[] = [];
      engine.authorize = function (ctx, command, resource) {
        seen.push(command);
        return original.call(this, ctx, command, resource);
      };
      try {
        assert.deepEqual(await names('by_age', find('age', { operator: '>=', value: 50 })), ['Cy', 'Abe']);
      } finally {
        engine.authorize = original;
      }
      assert.deepEqual(seen, ['record.find']);
    });

    it('tells nothing of a table or index to someone who may not query it', async () => {
      await server.engine.roles.create({
        name: 'no_people', grants: [{ commands: ['*'], resources: ['*'] }],
        denies: [{ commands: ['record.find'], resources: ['table:main/people'] }],
      });
      await server.engine.accounts.create('nosy', 'pw', ['no_people']);
      const nosy: [string, string] = ['nosy', 'pw'];
      const body = find('age', { operator: '>=', value: 50 });
      fails(await rest.post('/query/main/people/by_age?top=5', body, nosy), 403, 12030);
      fails(await rest.post('/query/main/people/no_such_index?top=5', body, nosy), 403, 12030);
      fails(await rest.post('/query/main/people/by_age?top=5', find('name', { operator: '=', value: 'x' }), nosy), 403, 12030);
      // the same requests by someone who may: the real answers
      fails(await rest.post('/query/main/people/no_such_index?top=5', body), 404);
      fails(await rest.post('/query/main/people/by_age?top=5', find('name', { operator: '=', value: 'x' })), 400, 4073);
    });
  });
});
