/**
 * The API console in a real browser against the real server: a template per action, the token
 * masked in the editor and the response, the answer with its status and time, the history in
 * localStorage (without tokens) surviving a reload.
 */
import { strict as assert } from 'node:assert';
import { call } from '../helpers/server';
import { ActionTable } from '../../plugins/actions/action-table';
import { adminActions } from '../../plugins/actions/apis/admin';
import { dbActions } from '../../plugins/actions/apis/db';
import { mqActions } from '../../plugins/actions/apis/mq';
import type { Page } from 'playwright-core';
import { explorerSuite, logIn, docScreenshot, waitInPage } from './browser-harness';

/** The request editor's text (CodeMirror: one element per line). */
function editorText(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as any).document.querySelector('.cm-content')?.innerText ?? '');
}

describe('explorer: API console', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  before(async () => {
    const created = await call('POST', `${suite.server.http}/engine/api/v1/table/main/console_people`, { body: { fields: [{ name: 'name', type: 'varchar', length: 40 }] } });
    assert.equal(created.status, 200, created.text);
    // Published before any page asks for the overview, which is what starts the per-topic activity
    // record: the busiest topics stay empty, so the console must find this topic in the tree
    // (where the server's $SYS branch sorts first).
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const published = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'publishMessagesToMq', authToken: session.json.authToken, params: { topic: 'console/line7/temp', messages: [{ payload: 21 }] } } });
    assert.equal(published.json.errorCode, 0);
  });

  it('runs listTables from its template, shows the result, and keeps the history across a reload', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/console');
    const token = await page.evaluate<string>("JSON.parse(sessionStorage.getItem('engine.explorer.login')).token");
    await page.getByRole('list', { name: 'db actions' }).getByRole('button', { name: 'listTables', exact: true }).click();
    const editor = page.getByLabel('Request envelope (POST /api)');
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"listTables"'));
    const text = await editorText(page);
    assert.match(text, /"authToken": "<your session>"/);
    assert.ok(!text.includes(token), 'the editor never shows the token');
    assert.equal(JSON.parse(text).api, 'db');
    assert.match(page.url(), /#\/console\?action=db\.listTables$/);

    await page.getByRole('button', { name: 'Send' }).click();
    const body = page.getByLabel('Response body');
    await body.filter({ hasText: '"console_people"' }).waitFor();
    const response = page.getByRole('region', { name: 'Response' });
    await response.getByText('HTTP 200').waitFor();
    await response.getByText(/^\d+ ms$/).waitFor();
    const shown = JSON.parse(await body.innerText());
    assert.equal(shown.errorCode, 0);
    assert.equal(shown.authToken, '<your session>', 'the response shows the token masked');
    assert.ok(shown.result.data.some((entry: { tableName: string }) => entry.tableName === 'console_people'));
    await docScreenshot(page, 'console');

    // An edited request: the history keeps it as sent, without the token.
    await editor.fill(JSON.stringify({ api: 'db', action: 'listTables', params: { partialTableName: 'console_' }, authToken: '<your session>' }, null, 2));
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('complementary', { name: 'History' }).getByRole('button').filter({ hasText: 'db listTables' }).nth(1).waitFor();
    const stored = await page.evaluate<string>("localStorage.getItem('engine.explorer.console.history')");
    assert.ok(!stored.includes(token), 'the history holds no token');
    assert.equal(JSON.parse(stored).length, 2);

    await page.reload();
    const history = page.getByRole('complementary', { name: 'History' });
    const entries = history.getByRole('button').filter({ hasText: 'db listTables' });
    await entries.nth(1).waitFor();
    // Newest first: the edited request.
    await page.getByRole('list', { name: 'mq actions' }).getByRole('button', { name: 'listTopics', exact: true }).click();
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"listTopics"'));
    await entries.first().click();
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"console_"'));
    assert.deepEqual(JSON.parse(await editorText(page)).params, { partialTableName: 'console_' });
    await page.getByRole('button', { name: 'Send' }).click();
    await body.filter({ hasText: '"console_people"' }).waitFor();
  });

  it('fills the action templates with names from the server: a table, its index, and a topic found in the tree past $SYS', async () => {
    assert.equal((await call('POST', `${suite.server.http}/engine/api/v1/index/main/console_people/by_name`, { body: { fields: [{ name: 'name' }] } })).status, 200);
    const page = await suite.page();
    await logIn(page, undefined, '#/console?action=db.getRecordsByIndex');
    const text = (): Promise<string> => editorText(page);
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"console_people"'));
    const records = JSON.parse(await text());
    assert.deepEqual([records.params.tableName, records.params.indexName], ['console_people', 'by_name']);
    await page.goto('/apps/explorer/#/console?action=mq.getMessagesFromMqTopic');
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('getMessagesFromMqTopic'));
    assert.equal(JSON.parse(await text()).params.topic, 'console/line7/temp');
  });

  it('has a template for every action of the server\'s action table', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/console');
    const listed = new Set<string>();
    await page.getByRole('list', { name: 'mq actions' }).getByRole('button').first().waitFor();
    for (const api of ['admin', 'db', 'mq']) {
      for (const name of await page.getByRole('list', { name: `${api} actions` }).getByRole('button').allInnerTexts()) listed.add(`${api}.${name}`);
    }
    const known = new ActionTable({ admin: adminActions, db: dbActions, mq: mqActions }).list();
    assert.ok(known.length > 30);
    for (const entry of known) assert.ok(listed.has(`${entry.api}.${entry.action}`), `no template for ${entry.api}.${entry.action}`);
    assert.ok(listed.has('db.getRecordsInKeyRange') && listed.has('admin.createSession') && listed.has('mq.publishMessagesToMq'));
  });

  it('sends a REST route with the session as a Bearer token; the routes come from the OpenAPI document', async () => {
    const page = await suite.page();
    await logIn(page, undefined, '#/console?action=GET%20%2Fengine%2Fapi%2Fv1%2Ftable%2Fmain');
    await page.getByLabel(/^Request \(method, path, body/).waitFor();
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"method"'));
    assert.deepEqual(JSON.parse(await editorText(page)), { method: 'GET', path: '/engine/api/v1/table/main', body: null });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByLabel('Response body').filter({ hasText: '"console_people"' }).waitFor();
    await page.getByRole('region', { name: 'Response' }).getByText('HTTP 200').waitFor();
    await page.getByText('From the server\'s OpenAPI document.').waitFor();
    const routes = await page.getByRole('list', { name: 'REST routes' }).getByRole('button').allInnerTexts();
    assert.ok(routes.includes('POST /query/main/people/by_age?top=10&skip=0'), routes.join(', '));
    assert.ok(routes.includes('PATCH /record/main/people/1'), routes.join(', '));
  });

  it('edits the request in CodeMirror loaded only when the console opens: JSON highlighted, an invalid body flagged at its line and column and not sent, a valid one sent', async () => {
    const page = await suite.page();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    await logIn(page, undefined, '#/overview');
    await page.getByText('Uptime').first().waitFor();
    assert.ok(!requested.some((path) => /\/vendor\/(?:cm-|lezer-)/.test(path)), `CodeMirror loaded before the console: ${requested.join(', ')}`);
    await page.goto('/apps/explorer/#/console?action=db.listTables');
    const editor = page.getByLabel('Request envelope (POST /api)');
    await waitInPage(page, () => ((globalThis as any).document.querySelector('.cm-content')?.innerText ?? '').includes('"listTables"'));
    assert.equal(await editor.getAttribute('contenteditable'), 'true');
    assert.ok(requested.includes('/apps/explorer/vendor/cm-view.mjs'));
    // Highlighted: property names, strings.
    await page.locator('.cm-content .tok-propertyName', { hasText: '"action"' }).waitFor();
    await page.locator('.cm-content .tok-string', { hasText: '"listTables"' }).waitFor();
    await page.locator('#request-check', { hasText: 'Valid JSON.' }).waitFor();

    // A missing colon on line 3: flagged by the lint and the line below the editor, and not sent.
    const sent: string[] = [];
    page.on('request', (request) => { if (new URL(request.url()).pathname === '/api' && request.method() === 'POST') sent.push(request.postData() ?? ''); });
    await editor.fill('{\n  "api": "db",\n  "action" "listTables",\n  "params": {},\n  "authToken": "<your session>"\n}');
    await page.locator('#request-check', { hasText: /^Not JSON at line 3, column 12: / }).waitFor();
    await page.locator('.cm-lint-marker-error').waitFor();
    await page.locator('.cm-lintRange-error').waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('alert').filter({ hasText: 'The request is not valid JSON: line 3, column 12' }).waitFor();
    assert.deepEqual(sent, [], 'nothing was sent');

    // Fixed, then Ctrl+Enter in the editor sends it.
    await editor.fill('{\n  "api": "db",\n  "action": "listTables",\n  "params": {},\n  "authToken": "<your session>"\n}');
    await page.locator('#request-check', { hasText: 'Valid JSON.' }).waitFor();
    await page.locator('.cm-lint-marker-error').waitFor({ state: 'detached' });
    await editor.press('Control+Enter');
    await page.getByLabel('Response body').filter({ hasText: '"console_people"' }).waitFor();
    assert.equal(sent.length, 1);
    assert.equal(JSON.parse(sent[0]).action, 'listTables');
  });
});
