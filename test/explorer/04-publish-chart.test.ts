/**
 * Topics screen, Publish and Chart tabs: a message published from the page reaches a Node MQTT 5
 * subscriber with the same bytes, QoS, retain and properties; the chart plots a numeric series
 * from stored history and live points; the detail marks the changed number in its diff.
 */
import { strict as assert } from 'node:assert';
import mqtt, { type MqttClient, type IPublishPacket } from 'mqtt';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: publish and chart', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  const clients: MqttClient[] = [];

  async function client(): Promise<MqttClient> {
    const connected = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', clientId: `pc-${Math.random().toString(36).slice(2)}`, reconnectPeriod: 0 });
    clients.push(connected);
    return connected;
  }

  afterEach(async () => {
    for (const connected of clients.splice(0)) await connected.endAsync();
  });

  it('publishes from the page to an MQTT 5 subscriber: same bytes, QoS, retain, properties', async () => {
    const subscriber = await client();
    await subscriber.subscribeAsync('ui/out/#', { qos: 2, rap: true });
    const received = new Promise<{ topic: string; payload: Buffer; packet: IPublishPacket }>((resolve) => {
      subscriber.on('message', (topic, payload, packet) => resolve({ topic, payload, packet }));
    });
    // The topic exists (so the tree can prefill it).
    const publisher = await client();
    await publisher.publishAsync('ui/out/target', 'seed', { qos: 1 });
    const seed = await received;
    assert.equal(seed.payload.toString(), 'seed');
    const next = new Promise<{ topic: string; payload: Buffer; packet: IPublishPacket }>((resolve) => {
      subscriber.on('message', (topic, payload, packet) => { if (payload.toString() !== 'seed') resolve({ topic, payload, packet }); });
    });

    const page = await suite.page();
    await logIn(page, undefined, '#/topics/ui/out/target?tab=publish');
    const form = page.getByRole('form', { name: 'Publish a message' });
    await form.waitFor();
    assert.equal(await form.getByLabel('Topic', { exact: true }).inputValue(), 'ui/out/target');
    const text = 'Grüße {"ok": true}\n  ✓ line two';
    await form.getByLabel('Payload', { exact: true }).fill(text);
    await form.getByLabel('QoS').selectOption('1');
    await form.getByLabel('Retain').check();
    await form.getByLabel('Content type').fill('text/plain; charset=utf-8');
    await form.getByLabel('Response topic').fill('ui/replies');
    await form.getByLabel('Correlation data').fill('req-42');
    await form.getByLabel('Message expiry (seconds)').fill('3600');
    await form.getByRole('button', { name: 'Add user property' }).click();
    await form.getByLabel('User property 1 key').fill('origin');
    await form.getByLabel('User property 1 value').fill('explorer');
    await docScreenshot(page, 'topic-publish');
    await form.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: /Published message \d+ to ui\/out\/target/ }).waitFor();

    const message = await next;
    assert.equal(message.topic, 'ui/out/target');
    assert.ok(message.payload.equals(Buffer.from(text, 'utf8')), `bytes: ${message.payload.toString('hex')}`);
    assert.equal(message.packet.qos, 1);
    assert.equal(message.packet.retain, true);
    const properties = message.packet.properties!;
    assert.deepEqual({ ...properties.userProperties }, { origin: 'explorer' });
    assert.equal(properties.contentType, 'text/plain; charset=utf-8');
    assert.equal(properties.responseTopic, 'ui/replies');
    assert.equal(Buffer.from(properties.correlationData!).toString(), 'req-42');
    assert.ok(properties.messageExpiryInterval! > 3590 && properties.messageExpiryInterval! <= 3600);
    assert.equal(properties.payloadFormatIndicator, true);

    // Republish from the message detail fills the form again.
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator('td.payload-cell', { hasText: 'Grüße' }).click();
    const detail = page.getByRole('dialog', { name: /^Message \d+$/ });
    await detail.getByRole('button', { name: 'Republish' }).click();
    await form.waitFor();
    assert.equal(await form.getByLabel('Payload', { exact: true }).inputValue(), text);
    assert.equal(await form.getByLabel('User property 1 value').inputValue(), 'explorer');
    assert.equal(await form.getByLabel('Correlation data').inputValue(), 'req-42');
    assert.equal(await form.getByLabel('Retain').isChecked(), true);
  });

  it('JSON is checked in the browser with its line and column; Ctrl+Enter sends; the publisher is the console\'s client name; sent payloads are kept', async () => {
    const subscriber = await client();
    await subscriber.subscribeAsync('ui/json', { qos: 1 });
    const received = new Promise<{ payload: Buffer }>((resolve) => subscriber.on('message', (_topic, payload) => resolve({ payload })));
    const publisher = await client();
    await publisher.publishAsync('ui/json/seed', '{}', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/ui/json?tab=publish');
    const form = page.getByRole('form', { name: 'Publish a message' });
    await form.getByLabel('Payload type').selectOption('json');
    const payload = form.getByLabel('Payload', { exact: true });
    await payload.fill('{\n  "temp": 21.5,\n  "unit" "C"\n}');
    await form.locator('#payload-check', { hasText: /^Not JSON at line 3, column 10: / }).waitFor();
    assert.equal(await payload.getAttribute('aria-invalid'), 'true');
    await form.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not JSON at line 3, column 10' }).waitFor();
    await payload.fill('{\n  "temp": 21.5,\n  "unit": "C"\n}');
    await form.locator('#payload-check', { hasText: 'Valid JSON.' }).waitFor();
    await payload.press('Control+Enter');
    await page.getByRole('status').filter({ hasText: /Published message \d+ to ui\/json/ }).waitFor();
    assert.deepEqual(JSON.parse((await received).payload.toString()), { temp: 21.5, unit: 'C' });
    // Only the valid one reached the log, published as this console's client name.
    const clientName = await form.locator('.mono', { hasText: /^explorer-/ }).textContent();
    await page.getByRole('tab', { name: 'History' }).click();
    await page.getByText('Page 1 of 1 · 1 message', { exact: true }).waitFor();
    assert.equal(await page.locator('table[aria-label="Stored messages"] tbody tr td').last().textContent(), clientName);
    // The sent payload is offered again.
    await page.getByRole('tab', { name: 'Publish' }).click();
    await payload.fill('');
    const history = form.getByLabel('Sent before');
    await history.selectOption({ index: 1 });
    assert.equal(await payload.inputValue(), '{\n  "temp": 21.5,\n  "unit": "C"\n}');
    assert.equal(await form.getByLabel('Payload type').inputValue(), 'json');
  });

  it('hex and base64 payloads are sent as their bytes; the hex view has offsets and ASCII; a binary message republishes byte for byte', async () => {
    const subscriber = await client();
    await subscriber.subscribeAsync('ui/bytes', { qos: 1 });
    const payloads: Buffer[] = [];
    let arrived: () => void = () => undefined;
    subscriber.on('message', (_topic, payload) => { payloads.push(payload); arrived(); });
    const next = (count: number): Promise<void> => new Promise((resolve) => { arrived = () => { if (payloads.length >= count) resolve(); }; arrived(); });
    const publisher = await client();
    await publisher.publishAsync('ui/bytes/seed', 'x', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/ui/bytes?tab=publish');
    const form = page.getByRole('form', { name: 'Publish a message' });
    await form.getByLabel('Payload type').selectOption('hex');
    await form.getByLabel('Payload', { exact: true }).fill('00 ff 1');
    await form.locator('#payload-check', { hasText: 'even number of digits' }).waitFor();
    await form.getByLabel('Payload', { exact: true }).fill('00 ff 10 7f 41 42');
    await form.getByRole('button', { name: 'Publish' }).click();
    await next(1);
    assert.deepEqual([...payloads[0]], [0x00, 0xff, 0x10, 0x7f, 0x41, 0x42]);
    await form.getByLabel('Payload type').selectOption('base64');
    await form.getByLabel('Payload', { exact: true }).fill(Buffer.from([1, 2, 3, 250]).toString('base64'));
    await form.getByRole('button', { name: 'Publish' }).click();
    await next(2);
    assert.deepEqual([...payloads[1]], [1, 2, 3, 250]);
    // The first message's hex dump, then Republish: the form holds its bytes as base64.
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator('table[aria-label="Stored messages"] tbody tr').nth(1).click();
    const detail = page.getByRole('dialog', { name: /^Message \d+$/ });
    await detail.getByRole('tab', { name: 'Hex' }).click();
    assert.equal(await detail.getByLabel('Payload', { exact: true }).textContent(), '00000000  00 ff 10 7f 41 42                                 |....AB|');
    await detail.getByRole('button', { name: 'Republish' }).click();
    await form.waitFor();
    assert.equal(await form.getByLabel('Payload type').inputValue(), 'base64');
    assert.equal(await form.getByLabel('Payload', { exact: true }).inputValue(), Buffer.from([0x00, 0xff, 0x10, 0x7f, 0x41, 0x42]).toString('base64'));
    await form.getByRole('button', { name: 'Publish' }).click();
    await next(3);
    assert.deepEqual([...payloads[2]], [0x00, 0xff, 0x10, 0x7f, 0x41, 0x42]);
  });

  it('charts a numeric JSON field over stored and live points; the diff marks the changed number', async () => {
    const publisher = await client();
    for (let i = 0; i < 12; i++) await publisher.publishAsync('lab/sensor/1', JSON.stringify({ temp: 20 + i * 0.5, unit: 'C' }), { qos: 1 });
    await publisher.publishAsync('lab/sensor/1', 'offline', { qos: 1 }); // not numeric: not a point
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/lab/sensor/1?tab=chart&field=temp');
    await page.locator('.chart-points', { hasText: '12 points' }).waitFor();
    await page.locator('.chart-plot canvas').waitFor();
    await page.getByText('1 not numeric').waitFor();
    // A live point, once the chart's subscription is acknowledged.
    await page.locator('.chart-live', { hasText: 'Live updates on' }).waitFor();
    await publisher.publishAsync('lab/sensor/1', JSON.stringify({ temp: 30, unit: 'C' }), { qos: 1 });
    await page.locator('.chart-points', { hasText: '13 points' }).waitFor();
    await page.getByText('12 stored, 1 live').waitFor();
    // The payload itself as the series (no path): the bare numbers of another topic.
    await publisher.publishAsync('lab/counter', '41', { qos: 1 });
    await publisher.publishAsync('lab/counter', '42.5', { qos: 1 });
    await page.goto('/apps/explorer/#/topics/lab/counter?tab=chart');
    await page.locator('.chart-points', { hasText: '2 points' }).waitFor();
    // The numeric diff: message 42.5 against 41.
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator('td.payload-cell', { hasText: '42.5' }).click();
    const diff = page.getByRole('dialog', { name: /^Message \d+$/ }).getByLabel('Diff');
    await diff.locator('.diff-removed', { hasText: '41' }).waitFor();
    await diff.locator('.diff-added mark.diff-number', { hasText: '42.5' }).waitFor();
    await diff.getByText('(+1.5)').waitFor();
  });

  it('offers the numeric fields found, charts several at once, zooms by dragging, hovers to the millisecond; a number clicked in the pretty view charts it', async () => {
    const publisher = await client();
    for (let i = 0; i < 20; i++) await publisher.publishAsync('lab/multi', JSON.stringify({ temp: 20 + i, humidity: 40 - i / 2, state: 'ok', nested: { pressure: 1000 + i } }), { qos: 1 });
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page, undefined, '#/topics/lab/multi?tab=chart');
    const fields = page.getByRole('group', { name: 'Numeric fields' });
    await fields.getByRole('button', { name: 'nested.pressure' }).waitFor();
    assert.deepEqual(await fields.getByRole('button').allTextContents(), ['temp', 'humidity', 'nested.pressure']);
    await fields.getByRole('button', { name: 'temp' }).click();
    await page.locator('.chart-points', { hasText: '20 points' }).waitFor();
    await fields.getByRole('button', { name: 'humidity' }).click();
    await page.waitForURL(/field=temp%2Chumidity|field=temp,humidity/);
    await page.locator('.chart-latest', { hasText: 'temp = 39' }).waitFor();
    await page.locator('.chart-latest', { hasText: 'humidity = 30.5' }).waitFor();
    assert.equal(await page.locator('.u-legend .u-series').count(), 3, 'time and two series');
    assert.equal(await fields.getByRole('button', { name: 'humidity' }).getAttribute('aria-pressed'), 'true');
    await docScreenshot(page, 'topic-chart');
    // Hover: the time to the millisecond.
    const over = (await page.locator('.chart-plot .u-over').boundingBox())!;
    await page.mouse.move(over.x + over.width / 2, over.y + over.height / 2);
    assert.match(await page.locator('.u-legend .u-series').first().locator('.u-value').textContent() ?? '', /\d\d:\d\d:\d\d\.\d{3}$/);
    // Drag across a part of the plot: zoomed to it, and back.
    await page.mouse.move(over.x + over.width * 0.2, over.y + over.height / 2);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.4, over.y + over.height / 2);
    await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2);
    await page.mouse.up();
    await page.getByRole('button', { name: 'Reset zoom' }).click();
    await page.locator('.chart-zoom').waitFor({ state: 'detached' });
    // Click-to-chart from the message detail's pretty view.
    await page.getByRole('tab', { name: 'History' }).click();
    await page.locator('table[aria-label="Stored messages"] tbody tr').first().click();
    await page.getByRole('dialog', { name: /^Message \d+$/ }).locator('button.json-number[data-path="nested.pressure"]').click();
    await page.waitForURL(/tab=chart&field=nested\.pressure$/);
    await page.locator('.chart-latest', { hasText: 'nested.pressure = 1019' }).waitFor();
  });

  it('plots the newest 10,000 of a range holding more, and says "10,000"', async function () {
    this.timeout(120_000);
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const publish = async (from: number, count: number): Promise<void> => {
      const messages = Array.from({ length: count }, (_, i) => ({ payload: from + i }));
      const answer = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'publishMessagesToMq', authToken: session.json.authToken, params: { topic: 'lab/many', messages } } });
      assert.equal(answer.json.errorCode, 0, JSON.stringify(answer.json).slice(0, 200));
    };
    await publish(0, 10_000);
    await publish(10_000, 50);
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/lab/many?tab=chart');
    await page.locator('.chart-points', { hasText: '10,000 points' }).waitFor();
    await page.getByText('(10,000 stored, 0 live)').waitFor();
    await page.locator('.chart-truncated', { hasText: 'more than 10,000 stored messages: the newest 10,000 are plotted' }).waitFor();
    await page.locator('.chart-latest', { hasText: 'payload = 10049' }).waitFor();
  });

  it('charting a branch explains that only a topic can be charted instead of showing a raw error', async () => {
    const publisher = await client();
    await publisher.publishAsync('plant/a/temp', '21.5', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/plant/a?tab=chart');
    // Whichever the chart shows first: the explanation, or an error (the defect: raw 14244).
    const outcome = page.locator('.chart .chart-not-topic, .chart [role="alert"]').first();
    await outcome.waitFor();
    assert.equal(await outcome.textContent(), 'Only a topic can be charted; plant/a is a branch: pick one of its topics.');
    assert.equal(await page.locator('.chart').getByText('No numeric values').count(), 0);
    // Its topic charts as before.
    await page.goto('/apps/explorer/#/topics/plant/a/temp?tab=chart');
    await page.locator('.chart-points', { hasText: '1 point' }).waitFor();
  });
});

