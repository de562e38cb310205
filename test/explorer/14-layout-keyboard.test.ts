/**
 * Topics screen layout and keyboard, at 1440 and 800 px: the message detail is a split beside the
 * history (resizable, the table shrinks and keeps one line a row with its Publisher column), Esc
 * closes it, ↑/↓ move between messages; the tree is driven with the arrow keys; the Live tab gives
 * the topic and payload the free width.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import type { Page } from 'playwright-core';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

const TOPIC = 'factory/line4/robot/telemetry';
const WIDE = { width: 1440, height: 900 };
const NARROW = { width: 800, height: 900 };

describe('explorer: layout and keyboard', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  before(async () => {
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', clientId: 'line4-robot-controller', reconnectPeriod: 0 });
    for (let n = 1; n <= 30; n++) {
      const payload = { n, axis: { x: n * 1.5, y: 200 - n, z: 12.25 }, state: n % 3 === 0 ? 'moving' : 'idle', note: 'a payload long enough to need the free width of the table' };
      await publisher.publishAsync(TOPIC, JSON.stringify(payload), { qos: 1 });
    }
    await publisher.publishAsync('factory/line4/robot/status', 'ok', { qos: 1, retain: true });
    await publisher.publishAsync('factory/line5/press/status', 'ok', { qos: 1 });
    await publisher.endAsync();
  });

  async function openHistoryDetail(page: Page): Promise<void> {
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    await page.locator('table[aria-label="Stored messages"] tbody tr').nth(2).click();
    await page.getByRole('dialog', { name: 'Message 28' }).locator('dl').waitFor();
  }

  async function box(page: Page, selector: string): Promise<{ x: number; y: number; width: number; height: number }> {
    const found = await page.locator(selector).first().boundingBox();
    assert.ok(found, `${selector} is shown`);
    return found;
  }

  it('at 1440 px the detail is a split beside the history: the table shrinks, rows keep one line, the Publisher column shows; the divider resizes it', async () => {
    const page = await suite.page({ viewport: WIDE });
    await openHistoryDetail(page);
    await docScreenshot(page, 'message-detail');
    const table = await box(page, 'table[aria-label="Stored messages"]');
    const detail = await box(page, '.message-detail');
    assert.ok(table.x + table.width <= detail.x, `the table (right ${table.x + table.width}) ends before the detail (left ${detail.x})`);
    const heights = await page.locator('table[aria-label="Stored messages"] tbody tr').evaluateAll((rows) => rows.map((row) => row.getBoundingClientRect().height));
    assert.ok(Math.max(...heights) < 36, `one line a row (heights up to ${Math.max(...heights)})`);
    const publisher = await box(page, 'table[aria-label="Stored messages"] th.col-publisher');
    assert.ok(publisher.width > 60 && publisher.x + publisher.width <= detail.x, 'the Publisher column is in view');
    assert.equal(await page.locator('table[aria-label="Stored messages"] tbody tr').first().locator('td').last().textContent(), 'line4-robot-controller');
    // Dragging the divider 200 px to the left widens the detail by as much, and the width is kept.
    const splitter = await box(page, '[role="separator"][aria-label="Resize the message detail"]');
    await page.mouse.move(splitter.x + splitter.width / 2, splitter.y + 40);
    await page.mouse.down();
    await page.mouse.move(splitter.x + splitter.width / 2 - 100, splitter.y + 40);
    await page.mouse.move(splitter.x + splitter.width / 2 - 200, splitter.y + 40);
    await page.mouse.up();
    const wider = await box(page, '.message-detail');
    assert.ok(Math.abs(wider.width - detail.width - 200) <= 2, `the detail grew from ${detail.width} to ${wider.width}`);
    assert.equal(await page.evaluate("localStorage.getItem('engine.explorer.detailWidth')"), String(Math.round(wider.width)));
    // The keys move it too.
    await page.locator('[role="separator"]').focus();
    await page.keyboard.press('ArrowRight');
    assert.ok((await box(page, '.message-detail')).width < wider.width, '→ narrows the detail');
  });

  it('Esc closes the detail; ↑/↓ open the message above and below', async () => {
    const page = await suite.page({ viewport: WIDE });
    await openHistoryDetail(page);
    await page.keyboard.press('ArrowDown');
    await page.getByRole('dialog', { name: 'Message 27' }).waitFor();
    assert.match(page.url(), /[?&]msg=27\b/);
    assert.equal(await page.locator('tr.message-row.selected').getAttribute('data-id'), '27');
    await page.keyboard.press('ArrowDown');
    await page.getByRole('dialog', { name: 'Message 26' }).waitFor();
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.getByRole('dialog', { name: 'Message 29' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.message-detail').waitFor({ state: 'detached' });
    assert.doesNotMatch(page.url(), /msg=/);
  });

  it('at 800 px the detail goes below the history, which keeps its own scroll; both are in view', async () => {
    const page = await suite.page({ viewport: NARROW });
    await openHistoryDetail(page);
    await docScreenshot(page, 'message-detail-800');
    const tab = await box(page, '.topic-tab');
    const detail = await box(page, '.message-detail');
    assert.ok(detail.y >= tab.y + tab.height - 1, 'the detail starts below the tab');
    assert.ok(tab.height > 150 && detail.y < NARROW.height - 150, `both in view (tab ${tab.height} high, detail at ${detail.y})`);
    assert.ok(tab.x + tab.width <= NARROW.width && detail.x + detail.width <= NARROW.width, 'nothing wider than the window');
    const publisher = await box(page, 'table[aria-label="Stored messages"] th.col-publisher');
    assert.ok(publisher.x + publisher.width <= tab.x + tab.width + 1, 'the Publisher column is in view');
  });

  it('the tree is driven by the arrow keys: ↓/↑ move, → opens and enters, ← closes and goes up', async () => {
    const page = await suite.page({ viewport: WIDE });
    await logIn(page, undefined, '#/topics');
    const factory = page.locator('.tree-row[data-path="factory"]');
    await factory.waitFor();
    await factory.focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('.tree-row[data-path="factory"][aria-expanded="true"]').waitFor();
    await page.locator('.tree-row[data-path="factory/line4"]').waitFor();
    await page.keyboard.press('ArrowRight');
    await page.locator('.tree-row[data-path="factory/line4"]:focus').waitFor();
    assert.match(page.url(), /#\/topics\/factory\/line4$/);
    await page.keyboard.press('ArrowDown');
    await page.locator('.tree-row[data-path="factory/line5"]:focus').waitFor();
    assert.equal(await page.locator('.tree-row[data-path="factory/line5"]').getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowUp');
    // The focus moves on the next render: a key pressed before it would go to the row left.
    await page.locator('.tree-row[data-path="factory/line4"]:focus').waitFor();
    await page.keyboard.press('ArrowRight');
    await page.locator('.tree-row[data-path="factory/line4/robot"]').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.locator('.tree-row[data-path="factory/line4"][aria-expanded="false"]').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.locator('.tree-row[data-path="factory"]:focus').waitFor();
    assert.match(page.url(), /#\/topics\/factory$/);
  });

  for (const viewport of [WIDE, NARROW]) {
    it(`the Live tab gives the topic and the payload the free width at ${viewport.width} px`, async () => {
      const page = await suite.page({ viewport });
      await logIn(page, undefined, '#/topics/factory');
      await page.locator('.live-status', { hasText: 'Live' }).waitFor();
      const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
      for (let n = 0; n < 5; n++) await publisher.publishAsync(TOPIC, JSON.stringify({ n, axis: { x: n * 1.5, y: 200 - n, z: 12.25 }, state: 'idle', note: 'a payload long enough to need the free width of the table, and then some more of it' }), { qos: 1 });
      await publisher.endAsync();
      await page.locator('.live-row').nth(4).waitFor();
      if (viewport === WIDE) await docScreenshot(page, 'topic-live');
      const table = await box(page, '.live-table');
      const cut = await page.locator('.live-row').first().evaluate((row) => {
        const topic = row.querySelector('.live-topic')!;
        const payload = row.querySelector('.live-payload')!;
        return { topicCut: topic.scrollWidth > topic.clientWidth, payloadRight: payload.getBoundingClientRect().right, payloadFull: payload.scrollWidth > payload.clientWidth };
      });
      if (viewport === WIDE) assert.equal(cut.topicCut, false, `the topic ${TOPIC} is shown whole`);
      assert.ok(cut.payloadFull, 'the long payload fills its cell');
      assert.ok(table.x + table.width - cut.payloadRight < 24, `the payload reaches the table's right edge (${cut.payloadRight} of ${table.x + table.width})`);
    });
  }
});
