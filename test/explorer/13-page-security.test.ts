/**
 * The explorer's pages are hardened like a console that holds credentials (docs/explorer.md,
 * Security): their headers; the explorer, the launcher and the OpenAPI UI working under their
 * Content-Security-Policy (the harness fails any test on a CSP violation) while a script injected
 * into them does not run; no framing; direction control characters in topics, client ids and
 * payloads shown as escapes; the OpenAPI document behind credentials at both of its addresses.
 */
import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import mqtt from 'mqtt';
import type { Page } from 'playwright-core';
import { call } from '../helpers/server';
import { explorerSuite, logIn } from './browser-harness';

/** U+202E RIGHT-TO-LEFT OVERRIDE: `a<RLO>txt.exe` shows as `aexe.txt`. */
const RLO = '\u202E';
const BIDI_CHARS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * Adds an inline script and an element with an inline event handler to the page, as an injection
 * would; answers whether either ran, and the CSP directives the page reported as violated.
 */
async function injectScripts(page: Page): Promise<{ inlineRan: boolean; handlerRan: boolean; violated: string[] }> {
  const ran = await page.evaluate(`new Promise((resolve) => {
    window.__violated = [];
    document.addEventListener('securitypolicyviolation', (event) => window.__violated.push(event.violatedDirective));
    const script = document.createElement('script');
    script.textContent = 'window.__inlineRan = true';
    document.body.append(script);
    const image = document.createElement('img');
    image.setAttribute('onerror', 'window.__handlerRan = true');
    image.addEventListener('error', () => resolve({ inlineRan: window.__inlineRan === true, handlerRan: window.__handlerRan === true }));
    image.src = 'data:,';
    document.body.append(image);
  })`) as { inlineRan: boolean; handlerRan: boolean };
  if (ran.inlineRan || ran.handlerRan) return { ...ran, violated: [] };
  // Both were blocked: the page reports the two violations (events queued by the browser).
  const violated = await page.evaluate(`new Promise((resolve) => {
    const check = () => window.__violated.length >= 2 ? resolve([...window.__violated].sort()) : requestAnimationFrame(check);
    check();
  })`) as string[];
  return { ...ran, violated };
}

/** A GET of `path` exactly as written (no client normalizes its dot segments); the status line and body. */
function rawGet(base: string, path: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk) => { text += chunk.toString(); });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

function assertPageHeaders(headers: Record<string, string | string[] | undefined>, where: string): void {
  const policy = String(headers['content-security-policy'] ?? '');
  assert.match(policy, /(^|; )script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')*(;|$)/, `${where}: scripts only from the server (and the page's own inline ones by hash)`);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/, `${where}: no inline script, no eval`);
  assert.match(policy, /(^|; )frame-ancestors 'none'(;|$)/, `${where}: not framed`);
  assert.match(policy, /(^|; )script-src-attr 'none'(;|$)/, `${where}: no inline event handler`);
  assert.equal(headers['x-content-type-options'], 'nosniff', where);
  assert.equal(headers['referrer-policy'], 'no-referrer', where);
}

describe('explorer: page security', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  it('the launcher, the explorer and the OpenAPI UI page are sent with a CSP, nosniff and a Referrer-Policy; pages are not served as plain files', async () => {
    const base = suite.server.http;
    assertPageHeaders((await call('GET', `${base}/`, { auth: null, headers: { accept: 'text/html' } })).headers, 'launcher');
    assertPageHeaders((await call('GET', `${base}/apps/explorer/`, { auth: null })).headers, 'explorer');
    assertPageHeaders((await call('GET', `${base}/apps/explorer/index.html`, { auth: null })).headers, 'explorer index.html');
    assertPageHeaders((await call('GET', `${base}/engine/api/v1/documentation/`, { auth: null })).headers, 'OpenAPI UI');
    for (const path of ['/apps/explorer/launcher.html', '/apps/explorer/LAUNCHER.HTML']) {
      assert.equal((await call('GET', `${base}${path}`, { auth: null })).status, 404, `${path}: a page only through its route, with its headers`);
    }
    for (const path of ['/apps/explorer/style.css', '/apps/explorer/launcher.css', '/apps/explorer/js/main.js', '/apps/explorer/vendor/preact.mjs']) {
      const file = await call('GET', `${base}${path}`, { auth: null });
      assert.equal(file.status, 200, path);
      assert.equal(file.headers['x-content-type-options'], 'nosniff', path);
    }
  });

  it('the explorer works under its CSP (modules, import map, events, MQTT over WebSocket), and a script injected into it does not run', async () => {
    const page = await suite.page();
    const response = await page.goto('/apps/explorer/');
    assertPageHeaders(response!.headers(), 'explorer');
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    try {
      await publisher.publishAsync('csp/live', 'first', { qos: 1 });
      await logIn(page, undefined, '#/topics/csp/live');
      // connect-src 'self' covers the page's WebSocket to /mqtt on its own origin.
      await page.locator('.live-status.status-connected').waitFor();
      await publisher.publishAsync('csp/live', 'through the websocket', { qos: 1 });
      await page.locator('.live-row .live-payload', { hasText: 'through the websocket' }).waitFor();
    } finally {
      await publisher.endAsync();
    }
    suite.expectProblems(/Content Security Policy|CSP violation/);
    const injected = await injectScripts(page);
    assert.deepEqual(injected, { inlineRan: false, handlerRan: false, violated: ['script-src-attr', 'script-src-elem'] });
    // The page keeps working.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('region', { name: 'Busiest topics' }).waitFor();
  });

  it('the launcher is styled from its file under its CSP, and a script injected into it does not run', async () => {
    const page = await suite.page();
    const response = await page.goto('/');
    assertPageHeaders(response!.headers(), 'launcher');
    const link = page.getByRole('link', { name: /MQ Explorer/ });
    await link.waitFor();
    assert.equal(await link.evaluate((element) => (globalThis as any).getComputedStyle(element).borderTopLeftRadius), '10px', 'launcher.css applies');
    suite.expectProblems(/Content Security Policy|CSP violation/);
    assert.deepEqual(await injectScripts(page), { inlineRan: false, handlerRan: false, violated: ['script-src-attr', 'script-src-elem'] });
  });

  it('another page cannot frame the explorer', async () => {
    const page = await suite.page();
    suite.expectProblems(/frame|Content Security Policy|X-Frame-Options/i);
    const refused = page.waitForEvent('console', (message) => /frame-ancestors/.test(message.text()));
    await page.setContent(`<iframe src="${suite.server.http}/apps/explorer/"></iframe>`);
    await refused;
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
    // The browser shows its error page instead of the explorer: no app, no script of the server.
    assert.equal(await frame.locator('#app').count(), 0);
  });

  it('direction control characters in a topic, a client id and a payload are shown as escapes in the tree, the breadcrumb and the message detail', async () => {
    const topic = `bidi/report${RLO}fdp.exe`;
    const clientId = `sensor${RLO}7`;
    const payload = `total ${RLO}0001 EUR`;
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await publisher.publishAsync(topic, payload, { qos: 1, properties: { userProperties: { [`k${RLO}`]: `v${RLO}` } } });
    await publisher.endAsync();

    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${topic.split('/').map(encodeURIComponent).join('/')}?tab=history`);
    const escaped = (text: string) => text.replace(RLO, '\\u202E');
    const treeName = page.locator(`.tree-row[data-path="${topic}"] .tree-name`);
    await treeName.waitFor();
    assert.equal(await treeName.textContent(), escaped(`report${RLO}fdp.exe`));
    assert.equal(await treeName.locator('.hidden-char').count(), 1);
    assert.equal(await treeName.getAttribute('title'), escaped(topic), 'the tooltip too');
    const crumb = page.locator('.breadcrumb .current');
    assert.equal(await crumb.textContent(), escaped(`report${RLO}fdp.exe`));

    await page.locator('table[aria-label="Stored messages"] tbody tr').first().click();
    const detail = page.getByRole('dialog', { name: /^Message \d+$/ });
    const field = (name: string) => detail.locator('dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]');
    assert.equal(await field('Topic').textContent(), escaped(topic));
    assert.equal(await field('Publisher').textContent(), escaped(clientId));
    assert.equal(await detail.locator('pre.payload').textContent(), escaped(payload));
    assert.equal(await detail.locator('.user-properties td').allTextContents().then((cells) => cells.join(' ')), `${escaped(`k${RLO}`)} ${escaped(`v${RLO}`)}`);
    // Nowhere on the page (history rows, breadcrumb, tree, detail) is the character itself.
    const shown = await page.locator('#app').textContent();
    assert.doesNotMatch(shown ?? '', BIDI_CHARS);
  });

  it('a topic name holding HTML is shown as its text in the tree and the breadcrumb; nothing of it runs', async () => {
    const name = '<img src=x onerror="window.__pwned=1">';
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await publisher.publishAsync(`html/${name}`, 'x', { qos: 1 });
    await publisher.endAsync();
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/html/${encodeURIComponent(name)}`);
    const treeName = page.locator('.tree-row[data-path^="html/"] .tree-name');
    await treeName.waitFor();
    assert.equal(await treeName.textContent(), name);
    assert.equal(await page.locator('.breadcrumb .current').textContent(), name);
    assert.equal(await page.locator('#app img').count(), 0);
    assert.equal(await page.evaluate('window.__pwned'), undefined);
  });

  it('the OpenAPI document needs credentials at /openapi and at the UI\'s /documentation/json and /yaml; the UI page does not', async () => {
    const rest = `${suite.server.http}/engine/api/v1`;
    for (const path of ['/openapi', '/documentation/json', '/documentation/yaml']) {
      const anonymous = await call('GET', `${rest}${path}`, { auth: null });
      assert.equal(anonymous.status, 401, path);
      assert.equal(anonymous.json.errorCode, 12033, path);
      assert.match(String(anonymous.headers['www-authenticate']), /^Basic realm="engine"/, `${path}: the browser asks for the account`);
    }
    const document = (await call('GET', `${rest}/openapi`)).json;
    assert.equal(document.openapi, '3.0.3');
    assert.deepEqual((await call('GET', `${rest}/documentation/json`)).json, document, 'the same document at both addresses');
    assert.match((await call('GET', `${rest}/documentation/yaml`)).text, /^openapi: 3\.0\.3$/m);
    for (const path of ['/documentation', '/documentation/', '/documentation/static/swagger-ui-bundle.js', '/documentation/static/swagger-initializer.js']) {
      assert.equal((await call('GET', `${rest}${path}`, { auth: null })).status, 200, `${path}: public (no data of the server)`);
    }
    // The public files' prefix does not lead to the document.
    for (const path of ['/documentation/static/../json', '/documentation/static/%2e%2e/json', '/documentation/static/../../openapi']) {
      const answer = await rawGet(suite.server.http, `/engine/api/v1${path}`);
      assert.doesNotMatch(answer, /^HTTP\/1\.1 200/, path);
      assert.doesNotMatch(answer, /"openapi"/, path);
    }
  });

  it('the OpenAPI UI works under its CSP at /engine/api/v1/documentation (with and without the slash) once the browser has the account', async () => {
    const page = await suite.page({ httpCredentials: { username: 'admin', password: 'ADMIN' } });
    for (const path of ['/engine/api/v1/documentation', '/engine/api/v1/documentation/']) {
      const response = await page.goto(path);
      assertPageHeaders(response!.headers(), path);
      await page.locator('.opblock-summary-path', { hasText: '/engine/api/v1/table/{db}' }).first().waitFor();
    }
  });

  it('the OpenAPI UI lists the operations and "Try it out" answers with the Basic credentials the browser holds', async () => {
    const created = await call('POST', `${suite.server.http}/engine/api/v1/table/main/tryout`, { body: { fields: [{ name: 'n', type: 'integer' }] } });
    assert.ok(created.status < 300, created.text);
    const page = await suite.page({ httpCredentials: { username: 'admin', password: 'ADMIN' } });
    await page.goto('/engine/api/v1/documentation');
    const operation = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path', { hasText: /^\/engine\/api\/v1\/table\/\{db\}$/ }) }).first();
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('input[placeholder="db"]').fill('main');
    await operation.getByRole('button', { name: 'Execute' }).click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '200');
    assert.match(await operation.locator('.live-responses-table .response-col_description pre').first().textContent() ?? '', /tryout/);
  });
});
