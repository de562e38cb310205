/**
 * Topics screen, History tab: 250 stored messages page newest first on the server (page 3 by deep
 * link), a time range, the message detail with its diff against the previous message, and all of
 * it again after a server restart on the same data.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import type { Page } from 'playwright-core';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

const TOPIC = 'factory/press/7/cycle';
const HASH = `#/topics/${TOPIC}?tab=history&page=3`;

describe('explorer: topic history', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  before(async () => {
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    for (let n = 1; n <= 250; n++) {
      await publisher.publishAsync(TOPIC, JSON.stringify({ n, pressure: 100 + n / 4 }), { qos: 1, properties: n % 50 === 0 ? { userProperties: { batch: String(n / 50) } } : {} });
    }
    await publisher.endAsync();
  });

  /** Waits for the page to show rows `from` down to `to`, then checks all of them. */
  async function expectRows(page: Page, from: number, to: number): Promise<void> {
    await page.locator('td.payload-cell', { hasText: `{"n":${from},` }).waitFor();
    await page.locator('td.payload-cell', { hasText: `{"n":${to},` }).waitFor();
    assert.deepEqual(await rowNumbers(page), range(from, to));
  }

  /** The `n` of each row of the visible history page, in order. */
  async function rowNumbers(page: Page): Promise<number[]> {
    const payloads = await page.locator('table[aria-label="Stored messages"] tbody tr td.payload-cell').allTextContents();
    return payloads.map((text) => (JSON.parse(text) as { n: number }).n);
  }

  function range(from: number, to: number): number[] {
    const out: number[] = [];
    for (let n = from; n >= to; n--) out.push(n);
    return out;
  }

  async function pageThree(page: Page): Promise<void> {
    await page.getByText('Page 3 of 5 · 250 messages').waitFor();
    await expectRows(page, 150, 101);
  }

  it('a deep link opens page 3 (newest first, 50 a page); the pager moves and keeps the page in the URL', async () => {
    const page = await suite.page();
    await logIn(page, undefined, HASH);
    await pageThree(page);
    await docScreenshot(page, 'topic-history');
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('Page 4 of 5').waitFor();
    assert.match(page.url(), /[?&]page=4\b/);
    await expectRows(page, 100, 51);
    await page.getByRole('button', { name: 'Oldest' }).click();
    await page.getByText('Page 5 of 5').waitFor();
    await expectRows(page, 50, 1);
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newest' }).click();
    await page.getByText('Page 1 of 5').waitFor();
    await expectRows(page, 250, 201);
    assert.doesNotMatch(page.url(), /page=/);
  });

  it('a time range (until) pages the messages before it', async () => {
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const described = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'getMessagesFromMqTopic', authToken: session.json.authToken, params: { topic: TOPIC, startFrom: 'head', maxMessages: 250, includeMessageMetadata: true } } });
    const messages = described.json.result.messages as Array<{ id: number; timestamp: string; payload: { n: number } }>;
    // The first message stored in a later millisecond than message 120: `until` it keeps 1..k.
    const cut = messages.find((message) => message.payload.n > 120 && message.timestamp > messages[119].timestamp)!;
    const until = new Date(`${cut.timestamp}Z`).toISOString();
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history&until=${encodeURIComponent(until)}`);
    await expectRows(page, cut.payload.n - 1, cut.payload.n - 50);
    // The total stays in view under the range (counted on the server's messages).
    const inRange = cut.payload.n - 1;
    await page.getByText(`Page 1 of ${Math.ceil(inRange / 50)} · ${inRange} messages in this range`).waitFor();
    // From and Until together: only the messages between them.
    const from = new Date(`${messages[9].timestamp}Z`);
    const before = messages.filter((message) => message.timestamp < messages[9].timestamp).length;
    await page.goto(`/apps/explorer/#/topics/${TOPIC}?tab=history&from=${encodeURIComponent(from.toISOString())}&until=${encodeURIComponent(until)}`);
    await page.getByText(`· ${inRange - before} messages in this range`).waitFor();
  });

  it('a From later than Until is refused with a message, and nothing is applied', async () => {
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    await page.getByText('Page 1 of 5 · 250 messages').waitFor();
    await page.getByLabel('From').fill('2030-01-02T10:00:00');
    await page.getByLabel('Until').fill('2030-01-01T10:00:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('alert').filter({ hasText: 'From must be earlier than Until.' }).waitFor();
    assert.doesNotMatch(page.url(), /from=|until=/);
    await page.getByText('Page 1 of 5 · 250 messages').waitFor();
  });

  it('times show milliseconds, a page number jumps to its page, and one message is "1 message"', async () => {
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    await expectRows(page, 250, 201);
    const time = await page.locator('table[aria-label="Stored messages"] tbody tr').first().locator('td').nth(1).textContent();
    assert.match(time ?? '', /\d\d:\d\d:\d\d\.\d{3}$/);
    await page.getByLabel('Go to page').fill('4');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await page.getByText('Page 4 of 5 · 250 messages').waitFor();
    await expectRows(page, 100, 51);
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await publisher.publishAsync('factory/press/7/single', 'once', { qos: 1 });
    await publisher.endAsync();
    await page.goto('/apps/explorer/#/topics/factory/press/7/single?tab=history');
    await page.getByText('Page 1 of 1 · 1 message', { exact: true }).waitFor();
  });

  it('a row opens the message detail (in the URL) with its properties and a diff against the previous message', async () => {
    const page = await suite.page();
    await logIn(page, undefined, HASH);
    await pageThree(page);
    await page.locator('td.payload-cell', { hasText: '{"n":150,' }).click();
    const detail = page.getByRole('dialog', { name: /^Message \d+$/ });
    await detail.waitFor();
    assert.match(page.url(), /[?&]msg=\d+/);
    await detail.locator('.user-properties', { hasText: 'batch' }).waitFor();
    const diff = detail.getByLabel('Diff');
    await diff.locator('.diff-removed', { hasText: '"n": 149' }).waitFor();
    await diff.locator('.diff-added', { hasText: '"n": 150' }).waitFor();
    assert.equal(await diff.locator('.diff-added mark.diff-number').count(), 2);
    await diff.locator('.diff-added', { hasText: '"pressure": 137.5' }).waitFor();
    // Views of the payload.
    await detail.getByRole('tab', { name: 'Hex' }).click();
    // A hex dump: offsets, 16 bytes a line in two groups of 8, and the ASCII column.
    assert.equal(await detail.getByLabel('Payload', { exact: true }).textContent(), [
      '00000000  7b 22 6e 22 3a 31 35 30  2c 22 70 72 65 73 73 75  |{"n":150,"pressu|',
      '00000010  72 65 22 3a 31 33 37 2e  35 7d                    |re":137.5}|',
    ].join('\n'));
    await detail.getByRole('tab', { name: 'Base64' }).click();
    assert.equal(await detail.getByLabel('Payload', { exact: true }).textContent(), Buffer.from(JSON.stringify({ n: 150, pressure: 137.5 })).toString('base64'));
    await detail.getByRole('tab', { name: 'Pretty' }).click();
    // The detail is a deep link too.
    const url = page.url();
    const second = await suite.page();
    await logIn(second, undefined, url.slice(url.indexOf('#')));
    await second.getByRole('dialog', { name: /^Message \d+$/ }).locator('.diff-added', { hasText: '"n": 150' }).waitFor();
    await detail.getByRole('button', { name: 'Close message' }).click();
    await detail.waitFor({ state: 'detached' });
    assert.doesNotMatch(page.url(), /msg=/);
  });

  it('the stored messages page the same after a server restart', async () => {
    await suite.restart();
    const page = await suite.page();
    await logIn(page, undefined, HASH);
    await pageThree(page);
  });
});
