/**
 * The topic tree as MQTT Explorer users expect it: each topic shows a preview of its last value
 * and a retained marker; `$SYS` is listed for an account that may list it (not for one that may
 * not); the filter takes MQTT wildcards as well as substrings, opens the tree to its matches, and
 * the footer counts the topics that match. Server side through the real action (browseTopics) and
 * in chromium.
 */
import { strict as assert } from 'node:assert';
import mqtt from 'mqtt';
import { call } from '../helpers/server';
import { explorerSuite, logIn, docScreenshot } from './browser-harness';

describe('explorer: tree previews, $SYS and the filter', function () {
  this.timeout(60_000);
  const suite = explorerSuite();

  async function action(params: Record<string, unknown>, account: [string, string] = ['admin', 'ADMIN']): Promise<{ errorCode: number; result: { total: number; topics: number; nodes: Array<{ name: string; path: string; preview?: string; retained?: boolean; topicCount: number }> } }> {
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: account[0], password: account[1] } } });
    const answer = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action: 'browseTopics', authToken: session.json.authToken, params } });
    return answer.json;
  }

  before(async () => {
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.mqttPort}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    for (const line of ['line1', 'line2', 'line3', 'line4']) {
      await publisher.publishAsync(`factory/${line}/press/status`, line === 'line4' ? 'stopped' : 'running', { qos: 1, retain: line === 'line4' });
      await publisher.publishAsync(`factory/${line}/press/temp`, JSON.stringify({ celsius: 60 + line.length }), { qos: 1 });
    }
    await publisher.publishAsync('building/hall/door', Buffer.from([0xff, 0x00, 0x10]), { qos: 1 });
    await publisher.endAsync();
  });

  it('browseTopics gives each topic a preview of its last value and its retained marker, and counts the matching topics', async () => {
    const level = await action({ prefix: 'factory/line4/press' });
    assert.equal(level.errorCode, 0);
    assert.deepEqual(level.result.nodes.map((node) => [node.name, node.preview, node.retained]), [['status', 'stopped', true], ['temp', '{"celsius":65}', false]]);
    const binary = await action({ prefix: 'building/hall' });
    assert.equal(binary.result.nodes[0].preview, '0xff0010');
    // A wildcard filter matches whole topics; the count is of topics, the nodes of the level.
    const wild = await action({ filter: 'factory/+/press/status' });
    assert.equal(wild.result.topics, 4);
    assert.deepEqual(wild.result.nodes.map((node) => [node.name, node.topicCount]), [['factory', 4]]);
    assert.equal((await action({ filter: 'factory/#' })).result.topics, 8);
    assert.equal((await action({ filter: 'press/temp' })).result.topics, 4, 'a substring without wildcards');
    assert.equal((await action({ filter: 'factory/#/x' })).errorCode, 14243, 'a filter that is not valid is refused');
  });

  it('$SYS is listed for an account that may list it, with its values, and not for one that may not', async () => {
    const admin = await action({});
    const sys = admin.result.nodes.find((node) => node.name === '$SYS');
    assert.ok(sys, 'admin sees $SYS');
    const broker = await action({ prefix: '$SYS/broker' });
    assert.ok(broker.result.nodes.length > 0, 'its levels open');
    // A reader limited to factory/# sees neither $SYS nor building.
    const admin2 = (await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } })).json.authToken as string;
    const adminCall = async (name: string, params: Record<string, unknown>): Promise<void> => {
      const answer = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: name, authToken: admin2, params } });
      assert.equal(answer.json.errorCode, 0, JSON.stringify(answer.json));
    };
    await adminCall('createRole', { roleName: 'factory-reader', grants: [{ commands: ['topic.list', 'mq.retrieve'], resources: ['topic:factory/#'] }] });
    await adminCall('createAccount', { username: 'factory-reader', password: 'reader-pass-1', roles: ['factory-reader'] });
    const reader = await action({}, ['factory-reader', 'reader-pass-1']);
    assert.deepEqual(reader.result.nodes.map((node) => node.name), ['factory']);
    assert.equal(reader.result.topics, 8);
  });

  it('in the page: previews and retained markers on the leaves; a wildcard filter opens the tree to its matches and the footer counts them', async () => {
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page, undefined, '#/topics');
    await page.locator('.tree-row[data-path="$SYS"]').waitFor();
    await page.locator('.tree-foot', { hasText: /^\d+ topics$/ }).waitFor();
    await page.getByLabel('Filter topics').fill('factory/+/press/status');
    await page.locator('.tree-foot', { hasText: '4 topics match factory/+/press/status' }).waitFor();
    const status = page.locator('.tree-row[data-path="factory/line4/press/status"]');
    await status.waitFor();
    assert.equal(await status.locator('.tree-preview').textContent(), 'stopped');
    assert.equal(await status.locator('.tree-retained').count(), 1);
    assert.equal(await page.locator('.tree-row[data-path="factory/line1/press/status"] .tree-retained').count(), 0);
    assert.equal(await page.locator('.tree-row[data-path="factory/line1/press/temp"]').count(), 0, 'topics the filter leaves out are not shown');
    assert.equal(await page.locator('.tree-row[data-path="$SYS"]').count(), 0, '$SYS does not match a filter starting with a level name');
    await docScreenshot(page, 'topics-filter');
    await page.getByLabel('Filter topics').fill('');
    await page.locator('.tree-row[data-path="$SYS"]').waitFor();
  });
});
