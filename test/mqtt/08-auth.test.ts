/** MQTT CONNECT goes through the kernel's login guard: the failed-login backoff applies to it too. */
import assert from 'node:assert/strict';
import { ManualClock } from '../helpers/manual-clock';
import type { TestServer } from '../helpers/server';
import { brokerUrl, connectOk, refusedCode, startBroker, tryConnect } from './mqtt-helpers';

describe('mqtt 08: auth', function () {
  this.timeout(30_000);
  let server: TestServer;
  const clock = new ManualClock();
  before(async () => {
    server = await startBroker({ login_failures_before_backoff: 2, login_backoff_max_seconds: 8 }, { clock });
    await server.engine.accounts.create('vic', 'vic-pw', ['reader']);
    await server.engine.roles.create({ name: 'devices', grants: [{ commands: ['mq.connect'], resources: ['client:dev-*'] }] });
    await server.engine.accounts.create('dev', 'dev-pw', ['devices']);
  });
  after(() => server.close());

  it('after repeated failures CONNECT is refused without a password check, even with the right password (MQTT 5 0x9F, 3.1.1 0x03), until the backoff ends', async () => {
    const url = brokerUrl(server);
    assert.equal(await refusedCode(url, { protocolVersion: 5, username: 'vic', password: 'wrong' }), 0x86);
    assert.equal(await refusedCode(url, { protocolVersion: 4, username: 'vic', password: 'wrong' }), 0x04);
    const checks = server.engine.passwordHasher.stats.done;
    const refused = await tryConnect(url, { protocolVersion: 5, username: 'vic', password: 'vic-pw' });
    assert.ok('refused' in refused);
    assert.equal(refused.code, 0x9f);
    assert.match(refused.connack.properties.reasonString, /try again in 1 s/);
    assert.equal(await refusedCode(url, { protocolVersion: 4, username: 'vic', password: 'vic-pw' }), 0x03);
    assert.equal(server.engine.passwordHasher.stats.done, checks, 'a refused attempt checks no password');

    clock.advanceSeconds(1);
    const { client } = await connectOk(url, { protocolVersion: 5, username: 'vic', password: 'vic-pw' });
    await client.endAsync();
  });

  it('client ids are authorized by role: a grant of mq.connect on client:dev-* allows those ids only', async () => {
    const url = brokerUrl(server);
    for (const protocolVersion of [4, 5] as const) {
      const { client } = await connectOk(url, { protocolVersion, username: 'dev', password: 'dev-pw', clientId: 'dev-1' });
      await client.endAsync();
      assert.equal(await refusedCode(url, { protocolVersion, username: 'dev', password: 'dev-pw', clientId: 'other-1' }), protocolVersion === 5 ? 0x87 : 0x05);
    }
  });
});
