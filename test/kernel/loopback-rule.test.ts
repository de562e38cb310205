/**
 * The loopback rule is a kernel policy: while `admin` has the default password at start, every
 * listener binds to loopback. A connection to 127.0.0.2 tells the two apart without another
 * network interface: a socket bound to 127.0.0.1 refuses it, one bound to 0.0.0.0 accepts it.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { call, startServer, tempDataDir, type TestServer } from '../helpers/server';
import { canConnect, spawnEngine, type EngineProcess } from '../helpers/engine-process';
import { definePlugin } from '../../kernel/plugin';

const OTHER_LOOPBACK = '127.0.0.2';
const STRONG = 'Strong-Admin-Pw-41c9';

function portOf(url: string): number {
  return Number(new URL(url).port);
}

async function action(base: string, envelope: Record<string, unknown>): Promise<any> {
  const reply = await call('POST', `${base}/api`, { body: envelope, auth: null });
  assert.equal(reply.status, 200, reply.text);
  return reply.json;
}

async function adminToken(base: string, password: string): Promise<string> {
  const login = await action(base, { api: 'admin', action: 'createSession', params: { username: 'admin', password } });
  assert.equal(login.errorCode, 0, login.errorMessage);
  return login.authToken as string;
}

async function setAdminPassword(base: string, current: string, password: string): Promise<any> {
  const token = await adminToken(base, current);
  return action(base, { api: 'admin', action: 'alterAccount', authToken: token, params: { username: 'admin', currentPassword: current, password } });
}

/** Whether both listeners (HTTP and HTTPS) accept connections from beyond 127.0.0.1. */
async function reachableBeyondLoopback(listening: { http?: string; https?: string }): Promise<boolean[]> {
  return Promise.all([listening.http!, listening.https!].map((url) => canConnect(OTHER_LOOPBACK, portOf(url))));
}

describe('the loopback rule (kernel policy)', function () {
  this.timeout(60_000);

  describe('through the real process', () => {
    const env = (dataDir: string) => ({ ENGINE_DATA_DIR: dataDir, ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: '0', ENGINE_PLUGINS: '["storage-lmdb","http","actions"]' });
    let proc: EngineProcess | undefined;
    afterEach(async () => { await proc?.stop(); proc = undefined; });

    it('binds every listener to loopback while admin has the default password; a change while running widens nothing; the decision is taken again at each start', async () => {
      const dataDir = tempDataDir();
      proc = spawnEngine(env(dataDir));
      let listening = await proc.listening;
      assert.equal(listening.host, '127.0.0.1');
      assert.deepEqual(await reachableBeyondLoopback(listening), [false, false]);
      assert.match(proc.output(), /default password/);

      // A strong password while running does not move the listeners (a restart does)...
      assert.equal((await setAdminPassword(listening.http!, 'ADMIN', STRONG)).errorCode, 0);
      assert.deepEqual(await reachableBeyondLoopback(listening), [false, false]);
      // ...and on a loopback server the default can come back: it stays loopback.
      assert.equal((await setAdminPassword(listening.http!, STRONG, 'ADMIN')).errorCode, 0);
      assert.deepEqual(await reachableBeyondLoopback(listening), [false, false]);
      assert.equal(await proc.stop(), 0);

      // Restarted with the default password: loopback again.
      proc = spawnEngine(env(dataDir));
      listening = await proc.listening;
      assert.equal(listening.host, '127.0.0.1');
      assert.deepEqual(await reachableBeyondLoopback(listening), [false, false]);
      assert.equal((await setAdminPassword(listening.http!, 'ADMIN', STRONG)).errorCode, 0);
      assert.equal(await proc.stop(), 0);

      // Restarted with a strong password: every interface.
      proc = spawnEngine(env(dataDir));
      listening = await proc.listening;
      assert.equal(listening.host, '0.0.0.0');
      assert.deepEqual(await reachableBeyondLoopback(listening), [true, true]);
      assert.doesNotMatch(proc.output(), /default password/);
    });

    it('refuses to set admin\'s password back to the default while the server listens on every interface', async () => {
      proc = spawnEngine({ ...env(tempDataDir()), ENGINE_ADMIN_PASSWORD: STRONG });
      const listening = await proc.listening;
      assert.equal(listening.host, '0.0.0.0');
      const refused = await setAdminPassword(listening.http!, STRONG, 'ADMIN');
      assert.equal(refused.errorCode, 12012);
      assert.match(refused.errorMessage, /every interface/);
      // Nothing changed: the strong password still logs in, the default does not.
      await adminToken(listening.http!, STRONG);
      const withDefault = await action(listening.http!, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
      assert.equal(withDefault.errorCode, 12033);
      assert.deepEqual(await reachableBeyondLoopback(listening), [true, true]);
    });
  });

  describe('in process', () => {
    let server: TestServer | undefined;
    afterEach(async () => { await server?.close(); server = undefined; });

    /** A listener plugin standing in for the next protocol (MQTT): it binds where the kernel says. */
    function otherListener(opened: (server: Server) => void) {
      return definePlugin({
        name: 'other-listener',
        register(engine) {
          const listener = createServer((socket) => socket.end());
          engine.onStart(() => new Promise<void>((resolve) => listener.listen(0, engine.listenHost, () => { opened(listener); resolve(); })));
          engine.onClose(() => new Promise<void>((resolve) => listener.close(() => resolve())));
        },
      });
    }

    it('every listener plugin binds to engine.listenHost, decided once at start', async () => {
      let other: Server | undefined;
      server = await startServer({ plugins: ['http'] }, { extraPlugins: [otherListener((s) => { other = s; })] });
      assert.equal(server.engine.listenHost, '127.0.0.1');
      assert.equal((other!.address() as AddressInfo).address, '127.0.0.1');
      await server.engine.accounts.changePassword('admin', STRONG);
      assert.equal(server.engine.listenHost, '127.0.0.1', 'a change while running widens nothing');
      assert.equal(await canConnect(OTHER_LOOPBACK, (other!.address() as AddressInfo).port), false);
    });

    it('an explicit listening_host is used as given, with a warning while the password is the default', async () => {
      server = await startServer({ plugins: ['http'], listening_host: '0.0.0.0' });
      assert.equal(server.engine.listenHost, '0.0.0.0');
      assert.equal(await canConnect(OTHER_LOOPBACK, portOf(server.http)), true);
      // The operator chose to expose it: the default password may come back (with a warning).
      await server.engine.accounts.changePassword('admin', STRONG);
      await server.engine.accounts.changePassword('admin', 'ADMIN');
      assert.ok(server.engine.accounts.adminHasDefaultPassword);
    });

    it('starts on every interface when admin\'s password is not the default', async () => {
      server = await startServer({ plugins: ['http'], data_dir: tempDataDir() }, { env: { ENGINE_ADMIN_PASSWORD: STRONG } });
      assert.equal(server.engine.listenHost, '0.0.0.0');
      assert.equal(await canConnect(OTHER_LOOPBACK, portOf(server.http)), true);
    });
  });
});
