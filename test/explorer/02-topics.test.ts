/**
 * Topics screen: the tree of every topic (one level per expanded node, filter, activity) and the
 * live tail over MQTT-over-WebSocket, driven by a real Node MQTT client.
 */
import { strict as assert } from 'node:assert';
import mqtt, { type MqttClient } from 'mqtt';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: topics tree and live tail', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];

  async function client(): Promise<MqttClient> {
    const connected = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', clientId: `tree-${Math.random().toString(36).slice(2)}`, reconnectPeriod: 0 });
    clients.push(connected);
    return connected;
  }

  afterEach(async () => {
    for (const connected of clients.splice(0)) await connected.endAsync();
  });

  it('shows the topics a client published, level by level, with counts; the filter asks the server', async () => {
    const publisher = await client();
    await publisher.publishAsync('plant/line1/temp', '21.5', { qos: 1 });
    await publisher.publishAsync('plant/line1/temp', '21.7', { qos: 1 });
    await publisher.publishAsync('plant/line2/pressure', '{"bar": 2}', { qos: 1 });
    await publisher.publishAsync('office/door', 'open', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics');
    const plant = page.locator('.tree-row[data-path="plant"]');
    await plant.waitFor();
    await page.locator('.tree-row[data-path="office"]').waitFor();
    assert.equal(await plant.locator('.tree-count').textContent(), '3');
    // Only the root level is loaded until a node is expanded.
    assert.equal(await page.locator('.tree-row[data-path="plant/line1"]').count(), 0);
    await page.getByRole('button', { name: 'Expand plant' }).click();
    await page.getByRole('button', { name: 'Expand plant/line1' }).click();
    const temp = page.locator('.tree-row[data-path="plant/line1/temp"]');
    await temp.waitFor();
    assert.equal(await temp.locator('.tree-count').textContent(), '2');
    await docScreenshot(page, 'topics-tree');
    // The filter is a server-side substring of full topic names.
    await page.getByLabel('Filter topics').fill('pressure');
    await page.locator('.tree-row[data-path="office"]').waitFor({ state: 'detached' });
    await page.locator('.tree-row[data-path="plant/line2"]').waitFor();
    assert.equal(await page.locator('.tree-row[data-path="plant/line1"]').count(), 0);
    await page.getByLabel('Filter topics').fill('');
    await page.locator('.tree-row[data-path="office"]').waitFor();
  });

  it('a new topic appears in the tree while the page is open, and flashes', async () => {
    const publisher = await client();
    await publisher.publishAsync('fresh/one', '1', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/fresh');
    await page.locator('.tree-row[data-path="fresh/one"]').waitFor();
    await publisher.publishAsync('fresh/two', '2', { qos: 1 });
    await page.locator('.tree-row[data-path="fresh/two"]').waitFor();
    await publisher.publishAsync('fresh/one', '3', { qos: 1 });
    await page.locator('.tree-row.flash[data-path="fresh/one"]').waitFor();
  });

  it('the live tail shows a branch\'s messages (subscribed to <path>/#), pauses, and opens a message', async () => {
    const publisher = await client();
    await publisher.publishAsync('livedemo/a', 'first', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/livedemo');
    await page.getByRole('status').filter({ hasText: 'livedemo/#' }).filter({ hasText: /^Live · / }).waitFor();
    await publisher.publishAsync('livedemo/a', '{"v": 1}', { qos: 1 });
    await publisher.publishAsync('livedemo/b/c', '{"v": 2}', { qos: 0, properties: { userProperties: { unit: 'C' }, contentType: 'application/json' } });
    const rows = page.locator('.live-row');
    await rows.filter({ hasText: 'livedemo/b/c' }).waitFor();
    await rows.filter({ hasText: 'livedemo/a' }).waitFor();
    assert.equal(await rows.count(), 2);
    // Paused: arriving messages are counted as skipped, not shown.
    await page.getByRole('button', { name: 'Pause' }).click();
    await publisher.publishAsync('livedemo/a', '{"v": 3}', { qos: 1 });
    await page.locator('.live-skipped', { hasText: '1 skipped' }).waitFor();
    assert.equal(await rows.count(), 2);
    await page.getByRole('button', { name: 'Resume' }).click();
    await publisher.publishAsync('livedemo/a', '{"v": 4}', { qos: 1 });
    await rows.filter({ hasText: '"v": 4' }).waitFor();
    await docScreenshot(page, 'topic-live');
    await rows.filter({ hasText: 'livedemo/b/c' }).click();
    const detail = page.getByRole('dialog', { name: 'Live message' });
    await detail.waitFor();
    await detail.getByText('application/json').waitFor();
    await detail.locator('.user-properties', { hasText: 'unit' }).waitFor();
    await detail.getByRole('button', { name: 'Close message' }).click();
    await detail.waitFor({ state: 'detached' });
  });

  it('a leaf topic is subscribed by its name only', async () => {
    const publisher = await client();
    await publisher.publishAsync('leafy/x', 'one', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/leafy/x?tab=live');
    await page.getByRole('status').filter({ hasText: 'leafy/x' }).filter({ hasText: /^Live · / }).waitFor();
    assert.ok(!(await page.getByRole('status').filter({ hasText: 'leafy/x' }).textContent())!.includes('#'));
    await publisher.publishAsync('leafy/x', 'two', { qos: 1 });
    await page.locator('.live-row', { hasText: 'two' }).waitFor();
  });

  it('the info tab shows counts, rates, subscribers and the integration table', async () => {
    const subscriber = await client();
    await subscriber.subscribeAsync('infodemo/#', { qos: 1 });
    const publisher = await client();
    for (let i = 0; i < 3; i++) await publisher.publishAsync('infodemo/x', String(i), { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/infodemo/x?tab=info');
    const info = page.getByRole('region', { name: 'Topic information' });
    await info.locator('.info-count', { hasText: '3' }).waitFor();
    await info.getByRole('link', { name: subscriber.options.clientId! }).waitFor();
    const table = info.locator('dd a[href^="#/tables/"]');
    await table.waitFor();
    assert.match((await table.getAttribute('href'))!, /^#\/tables\/[^/]+\/[^/]+$/);
    // A branch that is no topic itself says so.
    await page.goto('/apps/explorer/#/topics/infodemo?tab=info');
    await info.getByText('No message was ever published to').waitFor();
  });
});
