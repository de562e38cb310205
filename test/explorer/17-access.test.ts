/**
 * Accounts and roles: a role made in the page with its effect shown in words, an account created
 * with it, then a real MQTT client of that account gets exactly what the screen said (a subscription
 * to the granted filter, a refusal elsewhere); roles assigned and revoked from the list.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: accounts and roles', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  it('creates a role with its effect shown, an account with it, and the account can do what the effect says and no more', async () => {
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page, undefined, '#/access');
    const roles = page.getByRole('region', { name: 'Roles' });
    await roles.getByLabel('Role name').fill('line-watcher');
    await roles.getByLabel('Grants and denies').fill(JSON.stringify({
      grants: [{ commands: ['mq.connect'], resources: ['client:*'] }, { commands: ['mq.subscribe', 'mq.retrieve'], resources: ['topic:sensors/#'] }],
      denies: [{ commands: ['mq.subscribe'], resources: ['topic:sensors/secret'] }],
    }, null, 2));
    const effect = roles.getByRole('region', { name: 'Effect' });
    await effect.getByText('may subscribe to topic sensors/#', { exact: true }).waitFor();
    await effect.getByText('may not subscribe to topic sensors/secret', { exact: true }).waitFor();
    await effect.getByText('may connect as client *', { exact: true }).waitFor();
    await roles.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role line-watcher created.' }).waitFor();

    const accounts = page.getByRole('region', { name: 'Accounts' });
    const form = accounts.getByRole('form', { name: 'New account' });
    await form.getByLabel('Account name').fill('watcher');
    await form.getByLabel('Password').fill('watch-pass-7');
    await form.getByLabel('line-watcher').check();
    await form.getByRole('button', { name: 'Create account' }).click();
    await accounts.getByRole('row', { name: /watcher line-watcher/ }).waitFor();
    await docScreenshot(page, 'accounts-roles');

    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, clientId: 'watcher-1', username: 'watcher', password: 'watch-pass-7', reconnectPeriod: 0 });
    const granted = await client.subscribeAsync('sensors/#', { qos: 1 });
    assert.equal(granted[0].qos, 1, 'sensors/# granted');
    // mqtt.js rejects a SUBACK that refuses (0x87 not authorized).
    await assert.rejects(client.subscribeAsync('other/#', { qos: 1 }), /135|0x87|not authori/i);
    await client.endAsync();

    // Revoke from the list: the account keeps no role.
    await accounts.getByRole('button', { name: 'Revoke line-watcher from watcher' }).click();
    await page.getByRole('status').filter({ hasText: 'Role line-watcher revoked from watcher.' }).waitFor();
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const listed = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'listAccounts', authToken: session.json.authToken, params: {} } });
    assert.deepEqual(listed.json.result.accounts.find((account: { username: string }) => account.username === 'watcher').roles, []);
    // And assign it again from the row's menu.
    await accounts.getByLabel('Assign a role to watcher').selectOption('line-watcher');
    await page.getByRole('status').filter({ hasText: 'Role line-watcher assigned to watcher.' }).waitFor();
  });
});
