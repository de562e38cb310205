/**
 * A flood: 20,000 messages over 2,000 topics, spread over about 8 s, from a Node MQTT client while
 * the Topics screen shows the flooded branch (tree expanded, live tail subscribed to it). The page
 * keeps answering and keeps up (its tail sees the last message), its JS heap stays under 150 MB,
 * the live tail keeps at most 500 rows and counts the rest as skipped, the tree stays virtualised.
 * How fast it answers during the flood is measured by `npm run bench -- explorer`, not here.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import { explorerSuite, logIn, waitInPage } from './browser-harness';

const TOPICS = 2000;
const MESSAGES = 20_000;
const BATCH = 50;
const HEAP_LIMIT = 150 * 1024 * 1024;

describe('explorer: a flood of messages', function () {
  this.timeout(120_000);
  // The server in its own process, as in production.
  const suite = explorerSuite({ childProcess: true });

  it('keeps answering, keeps up and stays small while 20,000 messages over 2,000 topics arrive', async () => {
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    await publisher.publishAsync('flood/t0000', '0', { qos: 1 });
    const page = await suite.page();
    await logIn(page, undefined, '#/topics/flood');
    await page.getByRole('status').filter({ hasText: /^Live · flood\/#/ }).waitFor();
    await page.locator('.tree-row[data-path="flood/t0000"]').waitFor();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');

    // The page answers all through the flood, one request after the other.
    let flooding = true;
    let answered = 0;
    const probe = (async () => {
      while (flooding) {
        await page.evaluate("document.querySelectorAll('.live-row').length");
        answered++;
      }
    })();

    const heapNow = async (): Promise<number> => (await cdp.send('Performance.getMetrics')).metrics.find((metric) => metric.name === 'JSHeapUsedSize')!.value;
    const started = Date.now();
    for (let sent = 0; sent < MESSAGES; sent += BATCH) {
      const writes: Array<Promise<unknown>> = [];
      for (let i = sent; i < sent + BATCH; i++) {
        const topic = `flood/t${String(i % TOPICS).padStart(4, '0')}`;
        writes.push(publisher.publishAsync(topic, JSON.stringify({ i, value: Math.sin(i / 100) }), { qos: i === MESSAGES - 1 ? 1 : 0 }));
      }
      await Promise.all(writes);
      // Spread over about 8 seconds: 400 batches, one each 20 ms.
      const due = started + ((sent + BATCH) / MESSAGES) * 8000;
      if (Date.now() < due) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
    // The page keeps up: the tail has seen the last message.
    await page.locator('.live-row', { hasText: `"i":${MESSAGES - 1},` }).waitFor({ timeout: 30_000 });
    flooding = false;
    await probe;

    assert.ok(answered > 0, 'the page answered during the flood');
    const heap = await heapNow();
    assert.ok(heap < HEAP_LIMIT, `JS heap ${(heap / 1048576).toFixed(1)} MB`);

    assert.ok(await page.locator('.live-row').count() <= 500);
    const received = Number((await page.locator('.live-received').textContent())!.replace(/\D/g, ''));
    const skipped = Number((await page.locator('.live-skipped').textContent())!.replace(/\D/g, ''));
    assert.ok(received > MESSAGES / 2, `received ${received}`);
    assert.equal(skipped, received - 500);
    // The tree has the flooded level's first page (500 rows) but renders only those in view; at
    // the bottom, "more" loads the next page.
    const scrollDown = "document.querySelector('.tree-viewport').scrollTop = 1e9";
    await page.evaluate(scrollDown);
    await page.getByRole('button', { name: /^more \(1,500 of 2,000 not shown\)/ }).click();
    // More than 1,000 rows long once the second page is in (26 px a row).
    await waitInPage(page, "parseInt(document.querySelector('.tree-spacer').style.height) > 1000 * 26");
    await page.evaluate(scrollDown);
    await page.getByRole('button', { name: /^more \(1,000 of 2,000 not shown\)/ }).waitFor();
    await page.locator('.tree-row[data-path="flood/t0999"]').waitFor();
    const treeRows = await page.locator('.tree-row').count();
    assert.ok(treeRows < 100, `${treeRows} tree rows in the DOM`);
    // A deep link to a node past the loaded pages loads them and scrolls the node into view.
    await page.goto('/apps/explorer/#/topics/flood/t1999?tab=info');
    await page.locator('.tree-row.selected[data-path="flood/t1999"]').waitFor();
    assert.ok(await page.locator('.tree-row').count() < 100);
    await publisher.endAsync();
  });
});
