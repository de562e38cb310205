/**
 * The Subscriptions screen: every subscription of every session the account may use (topic filter,
 * client, QoS, options), searched on the server by topic filter or client name; through the action
 * (listMqSubscriptions) and in chromium, with real MQTT clients subscribed.
 */
import { strict as assert } from 'node:assert';
import mqtt, { type MqttClient } from 'mqtt';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: subscriptions', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];

  before(async () => {
    const connect = (clientId: string) => mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    const dashboard = await connect('dashboard-7');
    clients.push(dashboard);
    await dashboard.subscribeAsync('factory/+/press/status', { qos: 1 });
    await dashboard.subscribeAsync('factory/line4/#', { qos: 2, nl: true, rap: true, rh: 2, properties: { subscriptionIdentifier: 7 } });
    const logger = await connect('logger-1');
    clients.push(logger);
    await logger.subscribeAsync('building/#', { qos: 0 });
  });

  after(async () => {
    for (const client of clients.splice(0)) await client.endAsync();
  });

  async function listSubscriptions(params: Record<string, unknown>) {
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const answer = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'listMqSubscriptions', authToken: session.json.authToken, params } });
    assert.equal(answer.json.errorCode, 0, JSON.stringify(answer.json));
    return answer.json.result as { total: number; subscriptions: Array<Record<string, unknown>> };
  }

  it('listMqSubscriptions lists every subscription with its client, QoS and options, searched by filter or client and paged', async () => {
    const all = await listSubscriptions({});
    assert.equal(all.total, 3);
    assert.deepEqual(all.subscriptions.map((row) => [row.clientName, row.topicFilter, row.qos]), [
      ['dashboard-7', 'factory/+/press/status', 1], ['dashboard-7', 'factory/line4/#', 2], ['logger-1', 'building/#', 0],
    ]);
    const options = all.subscriptions[1];
    assert.deepEqual([options.noLocal, options.retainAsPublished, options.retainHandling, options.subscriptionIdentifier, options.connected], [true, true, 2, 7, true]);
    assert.equal((await listSubscriptions({ filter: 'LINE4' })).total, 1, 'a part of a topic filter, any case');
    assert.equal((await listSubscriptions({ filter: 'logger' })).total, 1, 'a part of a client name');
    const second = await listSubscriptions({ offset: 1, limit: 1 });
    assert.deepEqual([second.total, second.subscriptions.map((row) => row.topicFilter)], [3, ['factory/line4/#']]);
  });

  it('the screen lists them with the options in words, searches, and links each client', async () => {
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page, undefined, '#/subscriptions');
    const table = page.getByRole('table', { name: 'Subscriptions list' });
    const row = table.locator('tr', { hasText: 'factory/line4/#' });
    await row.waitFor();
    assert.deepEqual((await row.locator('td').allTextContents()).map((text) => text.trim()), ['factory/line4/#', 'dashboard-7', 'connected', '2', 'id 7, no local, retain as published, retained: never']);
    await page.getByText('1–3 of 3').waitFor();
    await docScreenshot(page, 'subscriptions');
    await page.getByLabel('Search subscriptions').fill('building');
    await page.getByText('1–1 of 1').waitFor();
    assert.match(page.url(), /[?&]filter=building\b/);
    await table.getByRole('link', { name: 'logger-1' }).click();
    await page.waitForURL(/#\/clients\/logger-1$/);
  });
});
