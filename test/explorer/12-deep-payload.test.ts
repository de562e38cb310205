/**
 * A JSON payload nested 20,000 deep (the server returns it as its text, payloadEncoding
 * "jsonText") is shown as text in the Topics screen: its History row and detail, the detail of the
 * message after it (diffed against it), and the Live tail, without a page error (the views write
 * JSON back with JSON.stringify, which runs out of stack on it). docs/values.md.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { explorerSuite, logIn } from './browser-harness';

const TOPIC = 'hostile/deep';
const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;

describe('explorer: a payload nested too deeply to show as JSON', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  let publisher: MqttClient;

  before(async () => {
    publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await publisher.publishAsync(TOPIC, DEEP, { qos: 1 });
    await publisher.publishAsync(TOPIC, '{"after": 1}', { qos: 1 });
  });
  after(() => publisher?.endAsync());

  it('History lists it, and the details of it and of the message after it open as text (no page error)', async () => {
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    const deepRow = page.locator('td.payload-cell', { hasText: '[[[[' });
    await page.locator('td.payload-cell', { hasText: '{"after":1}' }).waitFor();
    await deepRow.click();
    await page.getByText('40,000 bytes').waitFor();
    await page.locator('td.payload-cell', { hasText: '{"after":1}' }).click();
    await page.getByText('Changes since the previous message').waitFor();
  });

  it('Live shows it when it arrives (no page error)', async () => {
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=live`);
    await page.getByRole('status').filter({ hasText: TOPIC }).filter({ hasText: /^Live · / }).waitFor();
    await publisher.publishAsync(TOPIC, DEEP, { qos: 1 });
    await publisher.publishAsync(TOPIC, '{"live": 2}', { qos: 1 });
    await page.locator('.live-row', { hasText: '[[[[' }).first().click();
    await page.locator('.live-row', { hasText: '"live"' }).waitFor();
  });
});
