/**
 * Browser tests of the explorer: Debian's chromium driven by playwright-core, one browser per test
 * file and a new context per test. Every test fails on a page error, a console error, a Content
 * Security Policy violation (the pages must work under their policy), or a request to anything but
 * the test server; a screenshot is saved on failure (test-results/explorer/).
 *
 *   const suite = explorerSuite();           // inside describe(): starts a server and chromium
 *   it('...', async () => {
 *     const page = await suite.page();       // a fresh context, watched
 *     await logIn(page);
 *   });
 *
 * No sleeps: wait on locators (`expect`-style helpers below) or on server-side events.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { rmSync } from 'node:fs';
import { spawnEngine } from '../helpers/engine-process';
import { startServer, tempDataDir, type TestServer } from '../helpers/server';
import type { Settings } from '../../kernel/settings';
import { freePort } from '../helpers/free-port';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const REPOSITORY = resolve(__dirname, '../../..');
const FAILURE_SHOTS = join(REPOSITORY, 'test-results/explorer');
/** Screenshots for docs/explorer.md are written only when asked (they are committed files). */
export const DOC_SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(REPOSITORY, 'docs/images/explorer') : undefined;

export const ADMIN: [string, string] = ['admin', 'ADMIN'];

export interface ExplorerSuite {
  /** The server (in-process; with `childProcess`, `engine` is absent: only `http` and `dataDir`). */
  readonly server: TestServer;
  /** The server's MQTT (TCP) port. */
  readonly mqttPort: number;
  readonly browser: Browser;
  /** A new context and page for this test, watched for errors and outside requests. */
  page(options?: { viewport?: { width: number; height: number }; httpCredentials?: { username: string; password: string } }): Promise<Page>;
  /** What went wrong in the current test's pages so far (checked after each test). */
  problems(): string[];
  /** Problems the current test causes on purpose (e.g. a blocked script): not failures. */
  expectProblems(pattern: RegExp): void;
  /** Restarts the server on the same data folder and ports (pages keep their URL). */
  restart(): Promise<void>;
}

export interface SuiteOptions {
  settings?: Partial<Settings>;
  /**
   * Runs the server as its own process (`node dist/main.js`), as in production: a test that
   * times the page (page.evaluate round trips) then does not also time the server's work, which
   * in-process would share this process's event loop with playwright.
   */
  childProcess?: boolean;
}


/** The server as a child process on free ports (HTTP and MQTT over TCP only). */
async function startChildServer(): Promise<{ server: TestServer; mqttPort: number }> {
  const dataDir = tempDataDir('explorer');
  const [httpPort, mqttPort] = [await freePort(), await freePort()];
  const child = spawnEngine({
    ENGINE_DATA_DIR: dataDir,
    ENGINE_LISTENING_HTTP_PORT: String(httpPort),
    ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: String(mqttPort),
    ENGINE_MQTTS_PORT: 'off',
    ENGINE_MQTT_WS_PORT: 'off',
    ENGINE_MQTT_WSS_PORT: 'off',
  });
  const listening = await child.listening;
  const server = {
    http: listening.http ?? `http://127.0.0.1:${httpPort}`,
    dataDir,
    get engine(): never { throw new Error('the server runs in a child process: no engine here'); },
    async close() {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  } as unknown as TestServer;
  return { server, mqttPort };
}

export function explorerSuite(options: SuiteOptions = {}): ExplorerSuite {
  let server: TestServer;
  let mqttPort = 0;
  let browser: Browser;
  let contexts: BrowserContext[] = [];
  let pages: Page[] = [];
  let problems: string[] = [];
  let expected: RegExp[] = [];
  let origin = '';

  const suite: ExplorerSuite = {
    get server() { return server; },
    get mqttPort() { return mqttPort; },
    get browser() { return browser; },
    async page(pageOptions = {}) {
      const context = await browser.newContext({ baseURL: server.http, viewport: pageOptions.viewport ?? { width: 1280, height: 800 }, httpCredentials: pageOptions.httpCredentials });
      contexts.push(context);
      // Reported by the page itself too: chromium's own console line is not guaranteed.
      await context.addInitScript("document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`))");
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(origin) || url.startsWith(origin.replace('http:', 'ws:')) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
        problems.push(`request outside the server: ${url}`);
        return route.abort();
      });
      const page = await context.newPage();
      pages.push(page);
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      return page;
    },
    problems: () => problems,
    expectProblems(pattern) { expected.push(pattern); },
    async restart() {
      const port = new URL(server.http).port;
      await server.close({ keepData: true });
      server = await startServer({ ...options.settings, data_dir: server.dataDir, listening_http_port: Number(port) });
      mqttPort = server.engine.need('mqtt').ports.mqtt!;
    },
  };

  before(async function () {
    this.timeout(60_000);
    assert.ok(existsSync(CHROMIUM), `chromium not found at ${CHROMIUM} (apt-get install chromium; .ci/run does)`);
    if (options.childProcess) {
      ({ server, mqttPort } = await startChildServer());
    } else {
      server = await startServer({ listening_https_port: null, ...options.settings });
      mqttPort = server.engine.need('mqtt').ports.mqtt!;
    }
    origin = server.http;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });

  afterEach(async function () {
    const failed = this.currentTest?.state === 'failed';
    if (failed && pages.length > 0) {
      mkdirSync(FAILURE_SHOTS, { recursive: true });
      const name = (this.currentTest?.fullTitle() ?? 'test').replace(/[^a-z0-9]+/gi, '-').slice(0, 120);
      await pages[pages.length - 1].screenshot({ path: join(FAILURE_SHOTS, `${name}.png`), fullPage: true }).catch(() => undefined);
    }
    const allowed = expected;
    const seen = problems.filter((problem) => !allowed.some((pattern) => pattern.test(problem)));
    problems = [];
    expected = [];
    for (const context of contexts) await context.close().catch(() => undefined);
    contexts = [];
    pages = [];
    if (!failed) assert.deepEqual(seen, [], 'the page had errors or made requests outside the server');
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
    await server?.close();
  });

  return suite;
}

/** Logs in through the login form and waits for the shell. */
export async function logIn(page: Page, [username, password]: [string, string] = ADMIN, hash = '#/overview'): Promise<void> {
  await page.goto(`/apps/explorer/${hash}`);
  await page.getByLabel('Account').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** Saves a screenshot for docs/explorer.md (only with UPDATE_SCREENSHOTS=1). */
export async function docScreenshot(page: Page, name: string): Promise<void> {
  if (!DOC_SHOTS) return;
  mkdirSync(DOC_SHOTS, { recursive: true });
  await page.screenshot({ path: join(DOC_SHOTS, `${name}.png`) });
}

/**
 * Waits until `predicate` (a function of `arg`, or an expression) is truthy in the page, checked on
 * every animation frame. Playwright's waitForFunction compiles its predicate with the page's
 * `eval`, which the pages' Content Security Policy forbids; page.evaluate is not subject to it.
 */
export async function waitInPage<Arg>(page: Page, predicate: string | ((arg: Arg) => unknown), arg?: Arg): Promise<void> {
  const source = typeof predicate === 'string' ? `() => (${predicate})` : predicate.toString();
  await page.evaluate(`new Promise((resolve, reject) => {
    const predicate = ${source};
    const arg = ${JSON.stringify(arg ?? null)};
    const check = () => {
      try {
        if (predicate(arg)) resolve(true);
        else requestAnimationFrame(check);
      } catch (error) {
        reject(error);
      }
    };
    check();
  })`);
}
