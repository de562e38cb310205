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
 *   flood          20,000 MQTT messages over 2,000 topics spread over about 8 s while the Topics
 *                  screen shows the flooded branch with its live tail: the worst `page.evaluate`
 *                  round trip and the page's longest event-loop stall during the flood (reference:
 *                  a round trip of the same page just before; the budget: < 200 ms each)
 *   bytes          gzip JavaScript of the first load (the issue's budget: 150 KB)
 *   scale          browseTopics and listMqSubscriptions at 100,000 topics and 10,000 sessions
 *                  (explorer-scale.ts; BENCH_EXPLORER_SCALE=0 leaves it out)
 */
import mqtt from 'mqtt';
import { chromium, type Browser, type Page } from 'playwright-core';
import { printExplorerScale, runExplorerScale, type ScaleResult } from './explorer-scale';
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
  flood: FloodResult;
  scale?: ScaleResult;
}

export interface FloodResult {
  messages: number;
  topics: number;
  /** A round trip of the page before the flood. */
  idleRoundTripMs: number;
  worstRoundTripMs: number;
  roundTrips: number;
  worstPageStallMs: number;
  floodMs: number;
}

const FLOOD_TOPICS = 2_000;
const FLOOD_MESSAGES = 20_000;
const FLOOD_BATCH = 50;
const FLOOD_SPREAD_MS = 8_000;

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
  const mqttPort = await freePort();
  const env = { ...engineEnv(port, dataDir), ENGINE_MQTT_PORT: String(mqttPort) };
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
    await logIn(page, '');
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
    const flood = await measureFlood(browser, server.url, mqttPort);

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
      flood,
      scale: process.env.BENCH_EXPLORER_SCALE === '0' ? undefined : await runExplorerScale(),
    };
  } finally {
    await browser.close();
    await server.stop();
    removeTempDir(dataDir);
  }
}

/** Logs in as admin from the login form of `/apps/explorer/<hash>`, until the page shows a session. */
async function logIn(page: Page, hash: string): Promise<void> {
  await page.goto(`/apps/explorer/${hash}`);
  await page.getByLabel('Account').fill('admin');
  await page.getByLabel('Password').fill('ADMIN');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** The page on the flooded branch, answering while the flood arrives. */
async function measureFlood(browser: Browser, serverUrl: string, mqttPort: number): Promise<FloodResult> {
  log(`explorer: flood of ${formatNumber(FLOOD_MESSAGES)} messages over ${formatNumber(FLOOD_TOPICS)} topics`);
  const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
  const page = await (await browser.newContext({ baseURL: serverUrl })).newPage();
  try {
    await publisher.publishAsync('flood/t0000', '0', { qos: 1 });
    await logIn(page, '#/topics/flood');
    await page.getByRole('status').filter({ hasText: /^Live · flood\/#/ }).waitFor();
    await page.locator('.tree-row[data-path="flood/t0000"]').waitFor();
    const idle: number[] = [];
    for (let i = 0; i < 5; i++) idle.push(await timed(() => page.evaluate(() => 1)));
    const idleRoundTripMs = medianOf(idle);
    // The page's own event loop: the longest gap between 20 ms timer ticks.
    await page.evaluate(`(() => {
      window.__stall = 0;
      let last = performance.now();
      window.__stallTimer = setInterval(() => {
        const now = performance.now();
        window.__stall = Math.max(window.__stall, now - last - 20);
        last = now;
      }, 20);
    })()`);
    let flooding = true;
    const roundTrips: number[] = [];
    const probe = (async () => {
      while (flooding) roundTrips.push(await timed(() => page.evaluate("document.querySelectorAll('.live-row').length")));
    })();
    const started = performance.now();
    for (let sent = 0; sent < FLOOD_MESSAGES; sent += FLOOD_BATCH) {
      const writes: Array<Promise<unknown>> = [];
      for (let i = sent; i < sent + FLOOD_BATCH; i++) {
        const topic = `flood/t${String(i % FLOOD_TOPICS).padStart(4, '0')}`;
        writes.push(publisher.publishAsync(topic, JSON.stringify({ i, value: Math.sin(i / 100) }), { qos: i === FLOOD_MESSAGES - 1 ? 1 : 0 }));
      }
      await Promise.all(writes);
      const due = started + ((sent + FLOOD_BATCH) / FLOOD_MESSAGES) * FLOOD_SPREAD_MS;
      const now = performance.now();
      if (now < due) await new Promise((resolve) => setTimeout(resolve, due - now));
    }
    const floodMs = performance.now() - started;
    await page.locator('.live-row', { hasText: `"i":${FLOOD_MESSAGES - 1},` }).waitFor({ timeout: 60_000 });
    flooding = false;
    await probe;
    const worstPageStallMs = Number(await page.evaluate('window.__stall'));
    return {
      messages: FLOOD_MESSAGES, topics: FLOOD_TOPICS, idleRoundTripMs, worstRoundTripMs: Math.max(...roundTrips),
      roundTrips: roundTrips.length, worstPageStallMs, floodMs,
    };
  } finally {
    await page.context().close();
    await publisher.endAsync();
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
    [`flood: ${formatNumber(result.flood.messages)} messages over ${formatNumber(result.flood.topics)} topics in ${(result.flood.floodMs / 1000).toFixed(1)} s, worst round trip of ${formatNumber(result.flood.roundTrips)} (reference: idle, ${ms(result.flood.idleRoundTripMs)})`,
      ms(result.flood.worstRoundTripMs), formatRatio(result.flood.worstRoundTripMs / result.flood.idleRoundTripMs), '< 200 ms'],
    ['flood: the page\'s longest event-loop stall', ms(result.flood.worstPageStallMs), '—', '< 200 ms'],
    ['first load, gzip JavaScript', `${(result.firstLoadGzipBytes / 1024).toFixed(1)} KB`, '—', '≤ 150 KB'],
  ])}\n`);
  if (result.scale) printExplorerScale(result.scale);
}
