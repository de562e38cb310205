/**
 * `npm run bench -- explorer`: how fast the web explorer answers in a real browser (Debian's
 * chromium through playwright-core), against a reference measured in the same run: the launcher
 * at `GET /`, a static page of the same server.
 *
 *   first screen   goto /apps/explorer/ until the login form takes input (reference: the
 *                  launcher's `load` event), median of BENCH_ROUNDS fresh contexts
 *   logged in      the login form submitted until the overview's counters show
 *   tree           #/topics on a server with BENCH_EXPLORER_TOPICS topics (default 10,000) under
 *                  one node, right after login: until the root shows (this first visit also loads
 *                  the screen's modules), then until that node's children show; then the root
 *                  again from the overview; then the time of a `page.evaluate` round trip while the
 *                  list is scrolled to its end
 *   bytes          gzip JavaScript of the first load (the issue's budget: 150 KB)
 */
import { chromium, type Page } from 'playwright-core';
import { benchRounds, engineEnv, formatNumber, formatRatio, freePort, httpOk, intEnv, log, removeTempDir, startChild, table, tempDir } from './load';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SEED_PER_CALL = 5_000;

export interface ExplorerResult {
  topics: number;
  referenceMs: number;
  firstScreenMs: number;
  loggedInMs: number;
  treeRootMs: number;
  treeLevelMs: number;
  treeRootAgainMs: number;
  scrolledRoundTripMs: number;
  firstLoadGzipBytes: number;
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

export async function runExplorer(): Promise<ExplorerResult> {
  const topics = intEnv('BENCH_EXPLORER_TOPICS', 10_000);
  const rounds = Math.max(3, benchRounds());
  const port = await freePort();
  const dataDir = tempDir('bench-explorer');
  const env = { ...engineEnv(port, dataDir), ENGINE_MQTT_PORT: '0' };
  const server = await startChild({ name: 'engine', script: 'dist/main.js', env, port });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  try {
    const { authToken } = await httpOk('POST', `${server.url}/api`, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
    log(`explorer: seeding ${formatNumber(topics)} topics`);
    for (let start = 0; start < topics; start += SEED_PER_CALL) {
      const messages = [];
      for (let i = start; i < Math.min(topics, start + SEED_PER_CALL); i++) messages.push({ topic: `bench/t${String(i).padStart(6, '0')}`, payload: i });
      await httpOk('POST', `${server.url}/api`, { api: 'mq', action: 'publishMessagesToMq', authToken, params: { messages } });
    }

    const fresh = async (): Promise<Page> => (await browser.newContext({ baseURL: server.url })).newPage();
    const reference: number[] = [];
    const firstScreen: number[] = [];
    const loggedIn: number[] = [];
    let firstLoadGzipBytes = 0;
    for (let round = 0; round < rounds; round++) {
      const launcher = await fresh();
      reference.push(await timed(() => launcher.goto('/', { waitUntil: 'load' })));
      await launcher.context().close();

      const page = await fresh();
      // The first load: scripts fetched until the login form takes input (screens prefetched
      // after login are not part of it).
      const scripts: Array<Promise<number>> = [];
      let firstLoad = true;
      page.on('response', (response) => {
        if (firstLoad && /javascript/.test(response.headers()['content-type'] ?? '')) scripts.push(response.request().sizes().then((sizes) => sizes.responseBodySize, () => 0));
      });
      firstScreen.push(await timed(async () => {
        await page.goto('/apps/explorer/', { waitUntil: 'commit' });
        await page.getByLabel('Account').waitFor();
      }));
      firstLoad = false;
      await page.getByLabel('Account').fill('admin');
      await page.getByLabel('Password').fill('ADMIN');
      loggedIn.push(await timed(async () => {
        await page.getByRole('button', { name: 'Log in' }).click();
        await page.getByRole('button', { name: 'Log out' }).waitFor();
      }));
      const bytes = (await Promise.all(scripts)).reduce((sum, size) => sum + size, 0);
      firstLoadGzipBytes = Math.max(firstLoadGzipBytes, bytes);
      await page.context().close();
    }

    // The tree: one node with every topic under it.
    const page = await fresh();
    await page.goto('/apps/explorer/');
    await page.getByLabel('Account').fill('admin');
    await page.getByLabel('Password').fill('ADMIN');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    const treeRootMs = await timed(async () => {
      await page.evaluate("location.hash = '#/topics'");
      await page.locator('[role="treeitem"][data-path="bench"]').waitFor();
    });
    const treeLevelMs = await timed(async () => {
      await page.evaluate("location.hash = '#/topics/bench'");
      await page.locator('[role="treeitem"][data-path="bench/t000000"]').waitFor();
    });
    // Again, with the screen's modules loaded and the counts taken: what a user sees from then on.
    await page.evaluate("location.hash = '#/overview'");
    await page.locator('.counter').first().waitFor();
    const treeRootAgainMs = await timed(async () => {
      await page.evaluate("location.hash = '#/topics'");
      await page.locator('[role="treeitem"][data-path="bench"]').waitFor();
    });
    await page.evaluate("location.hash = '#/topics/bench'");
    await page.locator('[role="treeitem"][data-path="bench/t000000"]').waitFor();
    await page.getByRole('tree').first().evaluate((tree: { scrollTop: number; scrollHeight: number }) => { tree.scrollTop = tree.scrollHeight; });
    const scrolledRoundTripMs = await timed(() => page.evaluate(() => 1));
    await page.context().close();

    return {
      topics,
      referenceMs: medianOf(reference),
      firstScreenMs: medianOf(firstScreen),
      loggedInMs: medianOf(loggedIn),
      treeRootMs,
      treeLevelMs,
      treeRootAgainMs,
      scrolledRoundTripMs,
      firstLoadGzipBytes,
    };
  } finally {
    await browser.close();
    await server.stop();
    removeTempDir(dataDir);
  }
}

export function printExplorer(result: ExplorerResult): void {
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  process.stdout.write(`\nexplorer (chromium; reference: the launcher page's load, ${ms(result.referenceMs)})\n`);
  process.stdout.write(`${table(['measure', 'time', 'vs reference', 'budget'], [
    ['first screen (login form takes input)', ms(result.firstScreenMs), formatRatio(result.firstScreenMs / result.referenceMs), '< 500 ms'],
    ['login → overview', ms(result.loggedInMs), formatRatio(result.loggedInMs / result.referenceMs), '—'],
    [`topics: root of ${formatNumber(result.topics)} topics (first visit, right after login)`, ms(result.treeRootMs), formatRatio(result.treeRootMs / result.referenceMs), '—'],
    [`topics: a level of ${formatNumber(result.topics)} nodes`, ms(result.treeLevelMs), formatRatio(result.treeLevelMs / result.referenceMs), '—'],
    ['topics: the root again (from the overview)', ms(result.treeRootAgainMs), formatRatio(result.treeRootAgainMs / result.referenceMs), '—'],
    ['round trip after scrolling it to the end', ms(result.scrolledRoundTripMs), '—', '< 200 ms'],
    ['first load, gzip JavaScript', `${(result.firstLoadGzipBytes / 1024).toFixed(1)} KB`, '—', '≤ 150 KB'],
  ])}\n`);
}
