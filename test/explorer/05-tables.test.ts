/**
 * The Tables screen (Data Explorer) in a real browser against the real server: tables made over
 * REST, then insert, inline and JSON edits, delete with a confirmation, an index range query and
 * CSV/JSON export in the page, each checked over REST; paging 120 records in index order; an
 * integration table is read-only.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot, waitInPage } from './browser-harness';

describe('explorer: tables', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const rest = (path: string) => `${suite.server.http}/engine/api/v1${path}`;

  before(async () => {
    const created = await call('POST', rest('/table/main/people'), { body: { fields: [
      { name: 'name', type: 'varchar', length: 40 },
      { name: 'age', type: 'integer' },
      { name: 'tags', type: 'json' },
    ] } });
    assert.equal(created.status, 200, created.text);
    assert.equal((await call('POST', rest('/index/main/people/by_age'), { body: { fields: [{ name: 'age' }] } })).status, 200);
    const inserted = await call('POST', rest('/record/main/people'), { body: [
      { name: 'Ann', age: 30, tags: ['a'] }, { name: 'Bob', age: 40 }, { name: 'Cy', age: 25 }, { name: 'Dee', age: 35 }, { name: 'Eve', age: 50 },
    ] });
    assert.deepEqual(inserted.json, { _ids: [1, 2, 3, 4, 5] });
  });

  /** The texts of one column of the records grid, top to bottom. */
  async function column(page: Page, name: string): Promise<string[]> {
    return page.evaluate((field) => {
      const table = (globalThis as any).document.querySelector('table[aria-label^="Records of"]');
      const at = [...table.querySelectorAll('thead th')].findIndex((th: any) => th.textContent === field);
      return [...table.querySelectorAll('tbody tr')].map((tr: any) => String(tr.children[at]?.textContent ?? ''));
    }, name);
  }

  async function waitColumn(page: Page, name: string, expected: string[]): Promise<void> {
    await waitInPage(page, ({ field, want }) => {
      const table = (globalThis as any).document.querySelector('table[aria-label^="Records of"]');
      if (!table || table.closest('[aria-busy="true"]')) return false;
      const at = [...table.querySelectorAll('thead th')].findIndex((th: any) => th.textContent === field);
      const got = [...table.querySelectorAll('tbody tr')].map((tr: any) => tr.children[at]?.textContent ?? '');
      return JSON.stringify(got) === JSON.stringify(want);
    }, { field: name, want: expected }).catch(async (error) => {
      assert.deepEqual(await column(page, name), expected);
      throw error;
    });
  }

  it('lists the tables, shows fields and indexes, and the records in record-ID order', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/tables');
    const overview = page.getByRole('table', { name: 'Tables of main' });
    await overview.getByRole('cell', { name: 'id, name, age, tags' }).waitFor();
    await overview.getByRole('cell', { name: 'id_pk, by_age' }).waitFor();
    await docScreenshot(page, 'tables');
    await page.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'people' }).click();
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
    assert.match(page.url(), /#\/tables\/main\/people$/);
    await docScreenshot(page, 'table-records');
    await page.getByRole('tab', { name: 'Fields and indexes' }).click();
    const fields = page.getByRole('region', { name: 'Fields' });
    await fields.getByRole('cell', { name: 'tags' }).waitFor();
    await page.getByRole('region', { name: 'Indexes' }).getByRole('cell', { name: 'by_age' }).waitFor();
    assert.match(page.url(), /tab=structure/);
  });

  it('inserts, edits a cell inline, edits a record as JSON and deletes it after a confirmation', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/tables/main/people');
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);

    await page.getByRole('button', { name: 'Insert record' }).click();
    const insert = page.getByRole('dialog', { name: 'Insert record' });
    const template = JSON.parse(await insert.getByLabel('Record JSON').inputValue());
    assert.deepEqual(template, { name: '', age: 0, tags: {} });
    await insert.getByLabel('Record JSON').fill(JSON.stringify({ name: 'Fay', age: 61, tags: { x: 1 } }));
    await insert.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Record 6 inserted.' }).waitFor();
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Fay']);
    assert.deepEqual((await call('GET', rest('/record/main/people/6'))).json, { name: 'Fay', age: 61, tags: { x: 1 } });

    // Inline: click the cell, type, Enter.
    await page.getByRole('cell', { name: '61', exact: true }).click();
    await page.getByLabel('age of record 6').fill('62');
    await page.getByLabel('age of record 6').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Record 6: age updated.' }).waitFor();
    await waitColumn(page, 'age', ['30', '40', '25', '35', '50', '62']);
    assert.equal((await call('GET', rest('/record/main/people/6'))).json.age, 62);

    // JSON edit of the whole record.
    await page.getByRole('button', { name: 'Edit record 6 as JSON' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit record 6' });
    assert.deepEqual(JSON.parse(await edit.getByLabel('Record JSON').inputValue()), { name: 'Fay', age: 62, tags: { x: 1 } });
    await edit.getByLabel('Record JSON').fill(JSON.stringify({ name: 'Faye', age: 63, tags: null }));
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Record 6 updated.' }).waitFor();
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Faye']);
    assert.deepEqual((await call('GET', rest('/record/main/people/6'))).json, { name: 'Faye', age: 63, tags: null });

    // A bad value is refused with the server's message, and nothing changes.
    await page.getByRole('cell', { name: '63', exact: true }).click();
    await page.getByLabel('age of record 6').fill('old');
    await page.getByLabel('age of record 6').press('Enter');
    await page.getByRole('alert').filter({ hasText: 'is not a number' }).waitFor();
    await page.getByLabel('age of record 6').press('Escape');

    // Delete: cancel first, then confirm.
    await page.getByRole('button', { name: 'Delete record 6' }).click();
    await page.getByRole('alertdialog', { name: 'Confirm delete' }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await call('GET', rest('/record/main/people/6'))).status, 200);
    await page.getByRole('button', { name: 'Delete record 6' }).click();
    await page.getByRole('alertdialog', { name: 'Confirm delete' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Record 6 deleted.' }).waitFor();
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
    assert.equal((await call('GET', rest('/record/main/people/6'))).status, 404);
  });

  it('queries a range of an index and exports the result as CSV and JSON', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/tables/main/people');
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
    await page.getByLabel('Order by index').selectOption('by_age');
    await waitColumn(page, 'age', ['25', '30', '35', '40', '50']);
    await page.getByLabel('From', { exact: true }).fill('30');
    await page.getByLabel('To', { exact: true }).fill('40');
    await page.getByRole('button', { name: 'Query' }).click();
    await waitColumn(page, 'name', ['Ann', 'Dee', 'Bob']);
    assert.match(page.url(), /index=by_age/);
    assert.match(page.url(), /from=30/);
    // A filter expression narrows the range.
    await page.getByLabel('Filter', { exact: true }).fill('name != "Dee"');
    await page.getByRole('button', { name: 'Query' }).click();
    await waitColumn(page, 'name', ['Ann', 'Bob']);
    await page.getByLabel('Filter', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Query' }).click();
    await waitColumn(page, 'name', ['Ann', 'Dee', 'Bob']);
    // The same query through REST.
    const queried = await call('POST', rest('/query/main/people/by_age?top=10'), { body: { find: { age: { operator: 'between', lowervalue: 30, uppervalue: 40 } } } });
    assert.deepEqual(queried.json._records.map((record: { name: string }) => record.name), ['Ann', 'Dee', 'Bob']);

    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    assert.equal(csv.suggestedFilename(), 'people-query.csv');
    assert.equal(readFileSync((await csv.path())!, 'utf8'), 'id,name,age,tags\r\n1,Ann,30,"[""a""]"\r\n4,Dee,35,\r\n2,Bob,40,\r\n');
    const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    assert.deepEqual(JSON.parse(readFileSync((await json.path())!, 'utf8')), [
      { id: 1, name: 'Ann', age: 30, tags: ['a'] }, { id: 4, name: 'Dee', age: 35, tags: null }, { id: 2, name: 'Bob', age: 40, tags: null },
    ]);

    // The deep link reopens the same query.
    await page.reload();
    await waitColumn(page, 'name', ['Ann', 'Dee', 'Bob']);
    assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), '30');
  });

  it('range bounds are typed as the index field: a quoted text is that text; a descending index finds rows with the bounds in either order', async () => {
    assert.equal((await call('POST', rest('/index/main/people/by_name'), { body: { fields: [{ name: 'name' }] } })).status, 200);
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const descending = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'db', action: 'createIndex', authToken: session.json.authToken, params: { databaseName: 'main', tableName: 'people', indexName: 'age_desc', fields: [{ name: 'age', sortDescending: true }] } } });
    assert.equal(descending.json.errorCode, 0, descending.text);
    const page = await suite.page();
    await logIn(page, undefined, '#/tables/main/people?index=by_name');
    await waitColumn(page, 'name', ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
    // From "Cy" in quotes: the names from Cy on, not every name (the quote sorts before letters).
    await page.getByLabel('From', { exact: true }).fill('"Cy"');
    await page.getByRole('button', { name: 'Query' }).click();
    await waitColumn(page, 'name', ['Cy', 'Dee', 'Eve']);
    await page.getByLabel('To', { exact: true }).fill('Dee');
    await page.getByRole('button', { name: 'Query' }).click();
    await waitColumn(page, 'name', ['Cy', 'Dee']);
    // The descending index, from 40 to 30 as it reads, and from 30 to 40.
    for (const [from, to] of [['40', '30'], ['30', '40']]) {
      await page.goto(`/apps/explorer/#/tables/main/people?index=age_desc&from=${from}&to=${to}`);
      await waitColumn(page, 'age', ['40', '35', '30']);
    }
  });

  it('pages through 120 records in index order on the server', async () => {
    assert.equal((await call('POST', rest('/table/main/numbers'), { body: { fields: [{ name: 'n', type: 'integer' }, { name: 'label', type: 'varchar', length: 10 }] } })).status, 200);
    assert.equal((await call('POST', rest('/index/main/numbers/by_n_desc'), { body: { fields: [{ name: 'n', ascending: false }] } })).status, 200);
    // n is shuffled against the record IDs, so index order differs from insert order.
    const values = Array.from({ length: 120 }, (_, at) => (at * 37) % 120);
    assert.equal((await call('POST', rest('/record/main/numbers'), { body: values.map((n) => ({ n, label: `n${n}` })) })).status, 200);

    const page = await suite.page();
    await logIn(page, undefined, '#/tables/main/numbers?index=by_n_desc');
    const expected = Array.from({ length: 120 }, (_, at) => String(119 - at));
    await waitColumn(page, 'n', expected.slice(0, 50));
    await page.getByText('Page 1 of 3').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await waitColumn(page, 'n', expected.slice(50, 100));
    assert.match(page.url(), /page=2/);
    await page.getByRole('button', { name: 'Next' }).click();
    await waitColumn(page, 'n', expected.slice(100));
    assert.ok(await page.getByRole('button', { name: 'Next' }).isDisabled());
    await page.getByLabel('Go to page').fill('2');
    await page.getByLabel('Go to page').press('Enter');
    await waitColumn(page, 'n', expected.slice(50, 100));
    await page.getByRole('button', { name: 'First' }).click();
    await waitColumn(page, 'n', expected.slice(0, 50));
    // A deep link to page 2 of 20 per page, in record-ID order.
    await page.goto(`/apps/explorer/#/tables/main/numbers?page=2&size=20`);
    await waitColumn(page, 'n', values.slice(20, 40).map(String));
    await page.getByText('Page 2 of 6').waitFor();
  });

  it('shows an integration table of a topic read-only', async () => {
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const authToken = session.json.authToken as string;
    const published = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'publishMessagesToMq', authToken, params: { topic: 'plant/line1', messages: [{ payload: { t: 21.5 } }] } } });
    assert.equal(published.json.errorCode, 0, published.text);
    const topics = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'describeTopics', authToken, params: { topics: ['plant/line1'] } } });
    const { databaseName, tableName } = topics.json.result.topics[0] as { databaseName: string; tableName: string };

    const page = await suite.page();
    await logIn(page, undefined, `#/tables/${databaseName}/${tableName}`);
    await page.getByRole('note').filter({ hasText: 'read-only' }).waitFor();
    await page.locator('table[aria-label^="Records of"] tbody tr').first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Insert record' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Delete record/ }).count(), 0);
    // Listed apart from the user tables.
    await page.getByRole('navigation', { name: 'Integration tables (MQTT topics)' }).getByRole('link', { name: tableName }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Tables', exact: true }).getByRole('link', { name: tableName }).count(), 0);
  });
});
