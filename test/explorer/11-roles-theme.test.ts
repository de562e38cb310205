/**
 * Roles apply in the explorer (a reader sees what it may read: the page uses the same actions as
 * any client), and the dark theme follows prefers-color-scheme.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: roles and theme', function () {
  this.timeout(60_000);
  const suite = explorerSuite({
    settings: {
      roles: [{
        name: 'plant-viewer',
        grants: [{ commands: ['topic.list', 'topic.describe', 'mq.retrieve'], resources: ['topic:plant/#'] }],
      }],
    },
  });

  before(async () => {
    await suite.server.engine.accounts.create('viewer', 'viewer-pw', ['plant-viewer']);
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`, { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await client.publishAsync('plant/line1/temp', '21.5', { qos: 1 });
    await client.publishAsync('office/door', 'open', { qos: 1 });
    await client.endAsync();
  });

  it('a viewer sees only the topics its roles let it list', async () => {
    const page = await suite.page();
    await logIn(page, ['viewer', 'viewer-pw'], '#/topics');
    await page.locator('.tree-row[data-path="plant"]').waitFor();
    assert.equal(await page.locator('.tree-row[data-path="office"]').count(), 0);
    // The administrator sees both.
    const admin = await suite.page();
    await logIn(admin, undefined, '#/topics');
    await admin.locator('.tree-row[data-path="office"]').waitFor();
    await admin.locator('.tree-row[data-path="plant"]').waitFor();
  });

  it('follows a dark color scheme', async () => {
    const page = await suite.page();
    await page.emulateMedia({ colorScheme: 'dark' });
    await logIn(page);
    const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    assert.equal(background, 'rgb(18, 21, 27)'); // --bg of the dark theme in style.css
    await page.locator('.counter').first().waitFor();
    await docScreenshot(page, 'overview-dark');
  });
});
