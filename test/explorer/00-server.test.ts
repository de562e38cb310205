/**
 * What the explorer needs from the server, over real HTTP (no browser): its files (compressed,
 * nothing from outside), the events stream (Bearer token, overview and activity events, `ended`
 * for a dead token), REST with a Bearer token, and the OpenAPI UI.
 */
import { strict as assert } from 'node:assert';
import { request } from 'node:http';
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import mqtt from 'mqtt';
import { call, startServer, type TestServer } from '../helpers/server';
import { VENDOR_FILES } from '../../plugins/explorer/vendor-files';

/** Reads an event stream until `until` says enough; resolves with the events seen. */
function readEvents(url: string, token: string, until: (events: Array<{ event: string; data: any }>) => boolean): Promise<Array<{ event: string; data: any }>> {
  return new Promise((resolve, reject) => {
    const events: Array<{ event: string; data: any }> = [];
    const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/event-stream/);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null');
          events.push({ event, data });
          if (until(events)) {
            req.destroy();
            resolve(events);
            return;
          }
        }
      });
      res.on('end', () => resolve(events));
    });
    req.on('error', (error) => (events.length > 0 ? resolve(events) : reject(error)));
    req.end();
  });
}

/** Vendor modules the first load must not import: they load with the chart, the live tab and the console. */
const LAZY_VENDOR = /^(?:uplot|mqtt|@codemirror\/.*|@lezer\/.*|style-mod|w3c-keyname|crelt|@marijn\/.*)$/;

describe('explorer: the server side', function () {
  this.timeout(30_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startServer({ listening_https_port: null });
    token = (await call('POST', `${server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } })).json.authToken;
  });
  after(() => server?.close());

  it('serves the app, its modules and every vendor module, gzip-compressed, with no outside address', async () => {
    const index = await call('GET', `${server.http}/apps/explorer/`, { auth: null });
    assert.equal(index.status, 200);
    assert.doesNotMatch(index.text, /https?:\/\//, 'index.html names no outside address');
    // The shell's modules are preloaded; each screen's imports are listed for the page to preload at once.
    assert.match(index.text, /<link rel="modulepreload" href="\.\/js\/app\.js">/);
    const lazy = JSON.parse(/<script type="application\/json" id="lazy-modules">([\s\S]*?)<\/script>/.exec(index.text)![1]) as Record<string, string[]>;
    assert.ok(lazy['screens/topics/index.js'].includes('screens/topics/tree.js'));
    assert.ok(!lazy['screens/topics/index.js'].includes('app.js'), 'the shell is not listed again');
    for (const name of Object.keys(VENDOR_FILES)) {
      const file = await call('GET', `${server.http}/apps/explorer/vendor/${name}`, { auth: null, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(file.status, 200, name);
      const etag = String(file.headers.etag);
      const again = await call('GET', `${server.http}/apps/explorer/vendor/${name}`, { auth: null, headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304, name);
    }
    const main = await call('GET', `${server.http}/apps/explorer/js/main.js`, { auth: null });
    assert.equal(main.status, 200);
    assert.match(String(main.headers['content-type']), /javascript/);
  });

  it('the first load (preact, htm, signals and the app) stays within 150 KB of gzip JavaScript', async () => {
    const gzipSize = (url: string) => new Promise<number>((resolve, reject) => {
      request(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          if (res.headers['content-encoding'] === 'gzip') gunzipSync(body); // it is real gzip
          resolve(body.length);
        });
      }).on('error', reject).end();
    });
    const index = (await call('GET', `${server.http}/apps/explorer/`, { auth: null })).text;
    const imports = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(index)![1]).imports as Record<string, string>;
    // Everything but the lazily loaded modules (uplot for charts, mqtt for the live tab, CodeMirror for the console).
    const eager = Object.entries(imports).filter(([name]) => !LAZY_VENDOR.test(name)).map(([, path]) => path);
    let total = 0;
    for (const path of eager) total += await gzipSize(new URL(path, `${server.http}/apps/explorer/`).href);
    const seen = new Set<string>();
    const walk = async (path: string): Promise<void> => {
      if (seen.has(path)) return;
      seen.add(path);
      const text = (await call('GET', `${server.http}/apps/explorer/js/${path}`, { auth: null })).text;
      total += await gzipSize(`${server.http}/apps/explorer/js/${path}`);
      // Static relative imports only: dynamic import() is lazy.
      for (const match of text.matchAll(/^\s*(?:import|export)[^'"]*?from\s*['"]([^.'"][^'"]*)['"]/gm)) {
        assert.doesNotMatch(match[1], LAZY_VENDOR, `${path} imports ${match[1]} on the first load`);
      }
      for (const match of text.matchAll(/^\s*(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]/gm)) {
        await walk(new URL(match[1], `http://x/${path}`).pathname.slice(1));
      }
    };
    await walk('main.js');
    assert.ok(total <= 150 * 1024, `first load is ${total} bytes of gzip JavaScript`);
  });

  it('the events stream pushes overview and activity events to a Bearer token, and ends for a dead token', async () => {
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.engine.need('mqtt').ports.mqtt}`, { username: 'admin', password: 'ADMIN' });
    let published = 0;
    const publishing = setInterval(() => { published++; void client.publishAsync('explorer/events/test', String(published), { qos: 0 }); }, 20);
    try {
      const events = await readEvents(`${server.http}/apps/explorer/events`, token, (seen) => seen.some((e) => e.event === 'activity' && e.data.topics.some((t: any) => t.topic === 'explorer/events/test')));
      // The last figures: the first may be from before the client connected (figures are taken at most once a second).
      const overview = events.filter((e) => e.event === 'overview').at(-1)!.data;
      assert.equal(typeof overview.storedMessages, 'number');
      assert.ok(overview.clientsConnected >= 1);
      const activity = events.find((e) => e.event === 'activity')!.data;
      assert.ok(activity.topics.find((t: any) => t.topic === 'explorer/events/test').count >= 1);
    } finally {
      clearInterval(publishing);
      await client.endAsync();
    }
    const dead = await readEvents(`${server.http}/apps/explorer/events`, 'not-a-token', () => false);
    assert.deepEqual(dead.map((e) => [e.event, e.data.errorCode]), [['ended', 12031]]);
  });

  it('REST accepts an action session token as Bearer; the OpenAPI UI is served from the server, its document to a token', async () => {
    const tables = await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: null, headers: { authorization: `Bearer ${token}` } });
    assert.equal(tables.status, 200);
    const wrong = await call('GET', `${server.http}/engine/api/v1/table/main`, { auth: null, headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.errorCode, 12033, 'a token that is not live is a bad credential like any other');
    const ui = await call('GET', `${server.http}/engine/api/v1/documentation/`, { auth: null });
    assert.equal(ui.status, 200);
    assert.doesNotMatch(ui.text, /https?:\/\/(?!127\.0\.0\.1|localhost)/, 'the UI page loads nothing from outside');
    // The document behind it needs credentials like every REST route (12-page-security tests both addresses).
    assert.equal((await call('GET', `${server.http}/engine/api/v1/documentation/json`, { auth: null })).status, 401);
    const spec = await call('GET', `${server.http}/engine/api/v1/documentation/json`, { auth: null, headers: { authorization: `Bearer ${token}` } });
    assert.equal(spec.json.openapi, '3.0.3');
    assert.ok(Object.keys(spec.json.paths).some((path) => path.includes('/table/')));
  });

  it('WebSocket upgrades of other paths get 404, also when the client resets at once, and the server keeps serving', async () => {
    const port = Number(new URL(server.http).port);
    const upgrade = (path: string, reset: boolean) => new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
        if (reset) {
          socket.resetAndDestroy();
          resolve('reset');
        }
      });
      let text = '';
      socket.on('data', (chunk) => { text += chunk.toString(); });
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
    });
    assert.match(await upgrade('/not-mqtt', false), /^HTTP\/1\.1 404/);
    await Promise.all(Array.from({ length: 200 }, () => upgrade('/not-mqtt', true)));
    const health = await call('GET', `${server.http}/`, { auth: null });
    assert.equal(health.json.name, 'engine');
  });
});
