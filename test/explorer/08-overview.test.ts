/** The Overview screen: live counters and the busiest topics, pushed by the server-sent events. */
import { strict as assert } from 'node:assert';
import type { MqttClient } from 'mqtt';
import { connectOk } from '../mqtt/mqtt-helpers';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot, waitInPage } from './browser-harness';

describe('explorer: overview', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];
  afterEach(() => { for (const client of clients.splice(0)) client.end(true); });

  const mqttUrl = () => `mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`;

  it('counters move when an MQTT client connects and publishes; the busiest topic shows and links to its page', async () => {
    const page = await suite.page();
    await logIn(page);
    await page.getByRole('status', { name: 'Live updates' }).filter({ hasText: 'Live' }).waitFor();
    const value = (label: string) => page.getByRole('group', { name: label, exact: true }).locator('.value');
    const before = Number((await value('Clients connected').textContent())!.replace(/\D/g, ''));

    const { client } = await connectOk(mqttUrl(), { protocolVersion: 5, clientId: 'overview-publisher', username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    clients.push(client);
    await page.getByRole('group', { name: 'Clients connected', exact: true }).locator('.value', { hasText: new RegExp(`^${before + 1}$`) }).waitFor();

    // A steady stream of messages until the figures show it.
    const timer = setInterval(() => { client.publish('plant/line1/temperature', JSON.stringify({ celsius: 21.5 }), { qos: 0 }); }, 20);
    try {
      const busiest = page.getByRole('region', { name: 'Busiest topics' });
      await busiest.getByRole('link', { name: 'plant/line1/temperature' }).waitFor();
      // Runs in the page: the rate counter is above zero and the topic count at least 1.
      await waitInPage(page, `(() => {
        const rate = document.querySelector('[aria-label="Messages in"] .value')?.textContent ?? '';
        const topics = document.querySelector('[aria-label="Topics"] .value')?.textContent ?? '';
        return /^[\\d.,]+\\/s$/.test(rate) && rate !== '0/s' && Number(topics.replace(/\\D/g, '')) >= 1;
      })()`);
      await docScreenshot(page, 'overview');
    } finally {
      clearInterval(timer);
    }
    const stored = await value('Stored messages').textContent();
    assert.ok(Number(stored!.replace(/\D/g, '')) > 0, `stored messages: ${stored}`);
    await page.getByRole('region', { name: 'Busiest topics' }).getByRole('link', { name: 'plant/line1/temperature' }).click();
    assert.match(page.url(), /#\/topics\/plant\/line1\/temperature$/);
  });

  it('the last hour\'s message-rate and client charts are kept on the server: a page opened after the traffic shows them at once', async () => {
    const { client } = await connectOk(mqttUrl(), { protocolVersion: 5, clientId: 'history-publisher', username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    clients.push(client);
    for (let n = 0; n < 50; n++) await client.publishAsync('plant/history', String(n), { qos: 1 });
    // The server's samples: refused without a session; with one, a sample after the traffic counts it.
    assert.equal((await call('GET', `${suite.server.http}/apps/explorer/overview-history`, { auth: null })).status, 401);
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const history = await call('GET', `${suite.server.http}/apps/explorer/overview-history`, { auth: null, headers: { authorization: `Bearer ${session.json.authToken}` } });
    assert.equal(history.status, 200);
    const samples = history.json.samples as Array<{ time: string; messagesInPerSecond: number; clientsConnected: number }>;
    assert.ok(samples.length >= 2, `the sample taken at start and the current one (${samples.length})`);
    assert.ok(samples.some((sample) => sample.messagesInPerSecond > 0), 'the messages published show as a rate');
    assert.ok(samples[samples.length - 1].clientsConnected >= 1);
    // The page draws them as it opens, before any live figure could have built a history.
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page);
    const rates = page.getByRole('region', { name: 'Messages per second, last hour' });
    await rates.locator('canvas').waitFor();
    await rates.locator('.ops-chart-now', { hasText: /^\d+ samples · now: in [\d.]+, out [\d.]+$/ }).waitFor();
    const clientsChart = page.getByRole('region', { name: 'Clients, last hour' });
    await clientsChart.locator('canvas').waitFor();
    await clientsChart.locator('.ops-chart-now', { hasText: /now: connected [1-9]\d*, disconnected \(kept\) \d+$/ }).waitFor();
    await docScreenshot(page, 'overview-charts');
  });

  it('the shared stream closes on logout (no reconnect, no error)', async () => {
    const page = await suite.page();
    await logIn(page);
    await page.getByRole('status', { name: 'Live updates' }).filter({ hasText: 'Live' }).waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    // Logged out, a reconnect would be refused with a 401 (a console error the harness catches):
    // log in again and see the stream live again with the new token.
    await page.getByLabel('Account').fill('admin');
    await page.getByLabel('Password').fill('ADMIN');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('status', { name: 'Live updates' }).filter({ hasText: 'Live' }).waitFor();
  });

  it('a session ended on the server ends the stream (event: ended) and the page returns to login by itself', async () => {
    const page = await suite.page();
    await logIn(page);
    await page.getByRole('status', { name: 'Live updates' }).filter({ hasText: 'Live' }).waitFor();
    for (const session of suite.server.engine.apiSessions.list('admin')) suite.server.engine.apiSessions.end(session.authToken);
    await page.getByText('Your session has ended or expired').waitFor();
  });

  it('after a server restart the stream reconnects: action sessions ended, so the page returns to login without an error', async () => {
    const page = await suite.page();
    await logIn(page);
    const live = page.getByRole('status', { name: 'Live updates' });
    await live.filter({ hasText: 'Live' }).waitFor();
    // The charts' lazy uplot import done first: under load it was still in flight at the restart,
    // and its refused fetch is a page error that has nothing to do with what this test checks.
    await page.locator('.ops-chart-plot canvas').nth(1).waitFor();
    // The server is down for a moment on purpose: a request the page makes then (the overview's
    // refresh, a screen's module loaded in the background) is refused, which chromium logs as a
    // console line whatever the page does with it. Only that network line is expected; a page
    // error (an exception the app did not handle) still fails the test.
    suite.expectProblems(/^console error: Failed to load resource: net::ERR_CONNECTION_(REFUSED|RESET)$/);
    await suite.restart();
    // The retry checks its token with a JSON action first (never a refused stream, which the
    // browser would log as an error): the token ended with the server, so the login screen.
    await page.getByText('Your session has ended or expired').waitFor();
    await page.getByLabel('Account').fill('admin');
    await page.getByLabel('Password').fill('ADMIN');
    await page.getByRole('button', { name: 'Log in' }).click();
    await live.filter({ hasText: 'Live' }).waitFor();
    // Figures from the new server: its uptime started again.
    await waitInPage(page, `/^\\d+s$/.test(document.querySelector('[aria-label="Uptime"] .value')?.textContent ?? '')`);
  });
});
