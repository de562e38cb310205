/** The Retained screen: list by filter, view one, delete one, delete by filter (count first). */
import { strict as assert } from 'node:assert';
import type { MqttClient } from 'mqtt';
import { connectOk } from '../mqtt/mqtt-helpers';
import { login, ok } from '../actions/action-client';
import { mq } from '../actions/mq/mq-client';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: retained messages', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];
  afterEach(() => { for (const client of clients.splice(0)) client.end(true); });

  const mqttUrl = () => `mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`;
  const connect = async (clientId: string) => {
    const { client } = await connectOk(mqttUrl(), { protocolVersion: 5, clientId, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    clients.push(client);
    return client;
  };

  it('lists, views (pretty and raw), deletes one and deletes by filter after showing the count', async () => {
    const publisher = await connect('retained-publisher');
    await publisher.publishAsync('ops/r/a', JSON.stringify({ level: 3, unit: 'bar' }), { qos: 1, retain: true, properties: { contentType: 'application/json', userProperties: { site: 'north' } } });
    await publisher.publishAsync('ops/r/b', 'plain text', { qos: 1, retain: true });
    await publisher.publishAsync('ops/r/c/d', Buffer.from([0, 1, 2, 255]), { qos: 1, retain: true });
    await publisher.publishAsync('ops/keep/x', 'kept', { qos: 1, retain: true });

    const page = await suite.page();
    await logIn(page, undefined, '#/retained');
    const list = page.getByRole('table', { name: 'Retained messages list' });
    const row = (topic: string) => list.locator(`tr[data-topic="${topic}"]`);
    for (const topic of ['ops/r/a', 'ops/r/b', 'ops/r/c/d', 'ops/keep/x']) await row(topic).waitFor();
    // Bytes that are UTF-8 text show as text, others in hex.
    await row('ops/r/b').getByText('plain text').waitFor();
    await row('ops/r/c/d').getByText('000102ff').waitFor();
    await docScreenshot(page, 'retained');

    // One message: pretty JSON, raw, properties.
    await row('ops/r/a').getByRole('link', { name: 'ops/r/a' }).click();
    assert.match(page.url(), /#\/retained\/ops\/r\/a$/);
    const payload = page.getByLabel('Payload text');
    await payload.getByText('"level": 3', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Raw' }).click();
    assert.equal(await payload.textContent(), '{"level":3,"unit":"bar"}');
    const properties = page.getByRole('region', { name: 'Properties' });
    await properties.getByText('application/json').waitFor();
    await properties.getByRole('table', { name: 'User properties' }).getByText('north').waitFor();
    await page.getByRole('link', { name: '← Retained messages' }).click();
    await row('ops/r/c/d').getByRole('link', { name: 'ops/r/c/d' }).click();
    await page.getByText('Not UTF-8 text: shown in hex.').waitFor();
    assert.equal((await payload.textContent())!.toLowerCase(), '000102ff');
    await page.getByLabel('Bytes as').selectOption('base64');
    await payload.getByText('AAEC/w==').waitFor();
    await page.goBack();

    // Delete one: its exact topic.
    await row('ops/r/b').getByRole('button', { name: 'Delete ops/r/b' }).click();
    await page.getByRole('dialog', { name: 'Delete retained message' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted the retained message of ops/r/b.').waitFor();
    await row('ops/r/b').waitFor({ state: 'detached' });
    await row('ops/r/a').waitFor();

    // Delete by filter: the count first.
    await page.getByLabel('Topic filter').fill('ops/r/#');
    await page.getByRole('button', { name: 'Show' }).click();
    await row('ops/keep/x').waitFor({ state: 'detached' });
    assert.match(page.url(), /#\/retained\?filter=ops%2Fr%2F%23$/);
    await page.getByRole('button', { name: 'Delete matching…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete retained messages' });
    await dialog.locator('.ops-count', { hasText: /^2$/ }).waitFor();
    await dialog.getByText('ops/r/c/d', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Delete 2' }).click();
    await page.getByText('Deleted 2 retained messages matching ops/r/#.').waitFor();
    await list.getByText('No retained message matches ops/r/#.').waitFor();

    // A fresh subscriber to the filter gets nothing retained; one outside it still does. The two
    // subscriptions are made one after the other on one connection, so anything retained under
    // ops/r/# would arrive before the message of ops/keep/#.
    const subscriber = await connect('retained-subscriber');
    const received: string[] = [];
    const kept = new Promise<void>((resolve) => subscriber.on('message', (topic) => {
      received.push(topic);
      if (topic === 'ops/keep/x') resolve();
    }));
    await subscriber.subscribeAsync('ops/r/#', { qos: 1 });
    await subscriber.subscribeAsync('ops/keep/#', { qos: 1 });
    await kept;
    assert.deepEqual(received, ['ops/keep/x']);
  });

  it('Delete matching acts on the filter typed in the box, not yet shown: the confirmation names it and only its messages go', async () => {
    const publisher = await connect('retained-typed-publisher');
    for (const topic of ['factory/line4/a/status', 'factory/line4/b/status', 'factory/line4/a/speed', 'building/x', 'building/y']) {
      await publisher.publishAsync(topic, `value of ${topic}`, { qos: 1, retain: true });
    }

    const page = await suite.page();
    await logIn(page, undefined, '#/retained?filter=building%2F%23');
    const list = page.getByRole('table', { name: 'Retained messages list' });
    await list.locator('tr[data-topic="building/x"]').waitFor();
    // Typed, not applied with Show: the list still shows building/#.
    await page.getByLabel('Topic filter').fill('factory/line4/+/status');
    await page.getByRole('button', { name: 'Delete matching…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete retained messages' });
    await dialog.waitFor();
    assert.match((await dialog.textContent())!, /2 retained messages match factory\/line4\/\+\/status and will be deleted/);
    await dialog.getByText('factory/line4/b/status', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Delete 2' }).click();
    await page.getByText('Deleted 2 retained messages matching factory/line4/+/status.').waitFor();

    // The server keeps exactly the retained messages outside the typed filter (listRetainedMessages
    // over real HTTP).
    const token = await login(suite.server);
    const retainedUnder = async (topicFilter: string) => {
      const result = await ok(suite.server, mq('listRetainedMessages', token, { topicFilter })) as { messages: Array<{ topic: string }> };
      return result.messages.map((m) => m.topic).sort();
    };
    assert.deepEqual(await retainedUnder('factory/#'), ['factory/line4/a/speed']);
    assert.deepEqual(await retainedUnder('building/#'), ['building/x', 'building/y']);
  });
});
