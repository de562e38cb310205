/** The Clients screen: sessions listed and searched, one client's detail, disconnect, remove disconnected. */
import { strict as assert } from 'node:assert';
import type { MqttClient } from 'mqtt';
import { call } from '../helpers/server';
import { connectOk } from '../mqtt/mqtt-helpers';
import { explorerSuite, logIn, docScreenshot, waitInPage } from './browser-harness';

interface Summary { clientName: string; connected: boolean; kind: string }

describe('explorer: clients', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];
  afterEach(() => { for (const client of clients.splice(0)) client.end(true); });

  const mqttUrl = () => `mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`;
  const connect = async (clientId: string, persistent: boolean) => {
    const { client } = await connectOk(mqttUrl(), {
      protocolVersion: 5, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0,
      clean: !persistent, properties: persistent ? { sessionExpiryInterval: 3600 } : {},
    });
    clients.push(client);
    return client;
  };
  let token: string | undefined;
  /** One mq action through POST /api, with an action session of admin. */
  const api = async (action: string, params: Record<string, unknown> = {}) => {
    if (!token) {
      const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
      token = session.json.authToken as string;
    }
    const response = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action, params, authToken: token } });
    assert.equal(response.json.errorCode, 0, JSON.stringify(response.json));
    return response.json.result;
  };
  const sessions = async (): Promise<Summary[]> => (await api('listMqSessions', { limit: 1000 })).sessions;

  it('lists and searches sessions, shows one client, disconnects it from the UI (MQTT 5 DISCONNECT 0x98)', async () => {
    const victim = await connect('ops-victim', true);
    await victim.subscribeAsync('ops/victim/#', { qos: 1 });
    await victim.publishAsync('ops/victim/hello', 'hi', { qos: 1 });
    await connect('ops-bystander', false);
    await api('createMqApiSession', { clientName: 'ops-api-reader' });

    const page = await suite.page();
    await logIn(page, undefined, '#/clients');
    const table = page.getByRole('table', { name: 'Sessions' });
    const row = (name: string) => table.locator(`tr[data-client="${name}"]`);
    await row('ops-victim').getByText('Connected', { exact: true }).waitFor();
    await row('ops-api-reader').getByText('Disconnected', { exact: true }).waitFor();
    await row('ops-api-reader').getByText('MQ API').waitFor();
    await docScreenshot(page, 'clients');

    // Server-side search: only names containing the text.
    await page.getByLabel('Search clients').fill('victim');
    await waitInPage(page, `document.querySelectorAll('table[aria-label="Sessions"] tbody tr[data-client]').length === 1`);
    assert.match(page.url(), /#\/clients\?filter=victim$/);
    await row('ops-victim').waitFor();

    await row('ops-victim').getByRole('link', { name: 'ops-victim' }).click();
    assert.match(page.url(), /#\/clients\/ops-victim$/);
    const detail = page.getByRole('region', { name: 'Client ops-victim' });
    await detail.getByRole('region', { name: 'Subscriptions' }).getByText('ops/victim/#').waitFor();
    await detail.getByRole('region', { name: 'Published topics' }).getByRole('link', { name: 'ops/victim/hello' }).waitFor();
    await detail.getByRole('group', { name: 'Messages published' }).getByText('1', { exact: true }).waitFor();
    await docScreenshot(page, 'client-detail');

    const reason = new Promise<number>((resolve) => victim.on('disconnect', (packet) => resolve(packet.reasonCode ?? -1)));
    const closed = new Promise<void>((resolve) => victim.once('close', () => resolve()));
    await detail.getByRole('button', { name: 'Disconnect' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect client' });
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    assert.equal(await reason, 0x98);
    await closed;
    await detail.getByText('Disconnected ops-victim.').waitFor();
    await detail.getByText('Disconnected', { exact: true }).waitFor();
    // The persistent session stays.
    assert.ok((await sessions()).some((s) => s.clientName === 'ops-victim' && !s.connected));

    // A deep link opens the detail directly.
    const fresh = await suite.page();
    await logIn(fresh, undefined, '#/clients/ops-api-reader');
    await fresh.getByRole('region', { name: 'Client ops-api-reader' }).getByRole('group', { name: 'Kind' }).getByText('MQ API').waitFor();
  });

  it("shows a subscription's options as the server keeps them (identifier, no local, retain as published, retain handling)", async () => {
    const client = await connect('ops-options', false);
    await client.subscribeAsync('ops/options/#', { qos: 1, nl: true, rap: true, rh: 2, properties: { subscriptionIdentifier: 7 } });
    await client.subscribeAsync('ops/plain', { qos: 0 });
    const page = await suite.page();
    await logIn(page, undefined, '#/clients/ops-options');
    const subscriptions = page.getByRole('region', { name: 'Client ops-options' }).getByRole('region', { name: 'Subscriptions' });
    await subscriptions.getByRole('row', { name: /ops\/options\/#/ }).getByText('id 7, no local, retain as published, retained: never', { exact: true }).waitFor();
    await subscriptions.getByRole('row', { name: /ops\/plain/ }).getByText('—', { exact: true }).waitFor();
  });

  it('shows where and how a client is connected: address, protocol, keep alive, connected since, in flight and queued, and its position in words', async () => {
    const { client } = await connectOk(mqttUrl(), { protocolVersion: 4, clientId: 'ops-facts', username: 'admin', password: 'ADMIN', reconnectPeriod: 0, keepalive: 45, clean: false });
    clients.push(client);
    await client.subscribeAsync('ops/facts/#', { qos: 1 });
    const [described] = (await api('describeMqSessions', { clientNames: ['ops-facts'] })).sessions;
    assert.deepEqual([described.address, described.protocolVersion, described.keepAliveSeconds, described.inflight, described.queued], ['127.0.0.1', 4, 45, 0, 0]);
    assert.match(described.connectedSince, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const page = await suite.page();
    await logIn(page, undefined, '#/clients/ops-facts');
    const detail = page.getByRole('region', { name: 'Client ops-facts' });
    const value = (label: string) => detail.getByRole('group', { name: label, exact: true }).locator('.value');
    await value('Address').filter({ hasText: '127.0.0.1' }).waitFor();
    assert.equal(await value('Protocol').textContent(), 'MQTT 3.1.1');
    assert.equal(await value('Keep alive').textContent(), '45s');
    assert.match(await value('Connected since').textContent() ?? '', /ago$|just now/);
    assert.equal(await value('In flight').textContent(), '0');
    assert.equal(await value('Queued').textContent(), '0');
    await detail.locator('.ops-position', { hasText: /^It has read the message log up to message [\d,]+; nothing newer is waiting for it\.$/ }).waitFor();
    // Disconnected: since when, instead.
    await client.endAsync();
    clients.splice(clients.indexOf(client), 1);
    await page.reload();
    await value('Disconnected since').waitFor();
  });

  it('"Remove disconnected sessions" shows the count first, then removes them', async () => {
    const keeper = await connect('ops-keeper', true);
    for (const name of ['ops-gone-1', 'ops-gone-2']) (await connect(name, true)).end(true);
    await api('createMqApiSession', { clientName: 'ops-gone-api' });
    // Wait until the server saw the two disconnections.
    for (;;) {
      const list = await sessions();
      if (['ops-gone-1', 'ops-gone-2'].every((name) => list.some((s) => s.clientName === name && !s.connected))) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const disconnected = (await sessions()).filter((s) => !s.connected).map((s) => s.clientName);
    assert.ok(disconnected.length >= 3);

    const page = await suite.page();
    await logIn(page, undefined, '#/clients');
    await page.getByRole('table', { name: 'Sessions' }).locator('tr[data-client="ops-keeper"]').waitFor();
    await page.getByRole('button', { name: 'Remove disconnected sessions' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove disconnected sessions' });
    await dialog.locator('.ops-count', { hasText: String(disconnected.length) }).waitFor();
    for (const name of ['ops-gone-1', 'ops-gone-2', 'ops-gone-api']) await dialog.getByText(name, { exact: true }).waitFor();
    await dialog.getByRole('button', { name: `Remove ${disconnected.length}` }).click();
    await page.getByText(`Removed ${disconnected.length} disconnected sessions.`).waitFor();
    await dialog.waitFor({ state: 'detached' });

    const left = await sessions();
    assert.deepEqual(left.filter((s) => !s.connected), []);
    assert.ok(left.some((s) => s.clientName === 'ops-keeper' && s.connected));
    await page.getByRole('table', { name: 'Sessions' }).locator('tr[data-client="ops-gone-1"]').waitFor({ state: 'detached' });
    assert.ok(keeper.connected);
  });

  it('pages on the server: 50 a page with the total, the page in the URL', async () => {
    for (let i = 0; i < 55; i++) await api('createMqApiSession', { clientName: `paged-${String(i).padStart(2, '0')}` });
    const page = await suite.page();
    await logIn(page, undefined, '#/clients?filter=paged-');
    const pager = page.getByRole('navigation', { name: 'Sessions pages' });
    await pager.getByText('1–50 of 55').waitFor();
    await page.locator('tr[data-client="paged-49"]').waitFor();
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('51–55 of 55').waitFor();
    await page.locator('tr[data-client="paged-54"]').waitFor();
    assert.equal(await page.locator('tr[data-client]').count(), 5);
    assert.match(page.url(), /#\/clients\?filter=paged-&page=2$/);
    assert.ok(await pager.getByRole('button', { name: 'Next' }).isDisabled());
  });
});
