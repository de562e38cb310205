/**
 * Transform fields in the explorer (issue 22): a topic's fields declared with configureTopic
 * `transformSteps` are columns of its History and rows of the message detail, and a numeric one is
 * charted (`@name`) from the stored messages and, live, from the messages the server stores next.
 */
import { strict as assert } from 'node:assert';
import mqtt, { type MqttClient } from 'mqtt';
import { call } from '../helpers/server';
import { docScreenshot, explorerSuite, logIn } from './browser-harness';

const TOPIC = 'plant/tf/sensor';

describe('explorer: transform fields', function () {
  this.timeout(60_000);
  const suite = explorerSuite();
  let publisher: MqttClient;

  async function api(action: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const session = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } });
    const answer = await call('POST', `${suite.server.http}/api`, { auth: null, body: { api: 'mq', action, authToken: session.json.authToken, params } });
    assert.equal(answer.json.errorCode, 0, answer.text);
    return answer.json as Record<string, unknown>;
  }

  before(async () => {
    await api('configureTopic', { topic: TOPIC, transformSteps: [{ transformStepMethod: 'jsonToTableFields', mapOfPropertiesToFields: [
      { recordPath: 'source_payload.temperature', fieldName: 'temperature', type: 'float' },
      { recordPath: 'source_payload.line', fieldName: 'line', type: 'varchar', length: 8 },
    ] }] });
    publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${suite.server.engine.need('mqtt').ports.mqtt}`, { protocolVersion: 5, username: 'admin', password: 'ADMIN', clientId: 'tf-publisher', reconnectPeriod: 0 });
    for (let i = 0; i < 5; i++) await publisher.publishAsync(TOPIC, JSON.stringify({ temperature: 20 + i, line: `L${i}` }), { qos: 1 });
    // No temperature: that column is null for this message.
    await publisher.publishAsync(TOPIC, JSON.stringify({ line: 'L9' }), { qos: 1 });
  });

  after(async () => {
    await publisher?.endAsync();
  });

  it('shows the transform fields as History columns and in the message detail', async () => {
    const page = await suite.page({ viewport: { width: 1440, height: 900 } });
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    const table = page.getByRole('table', { name: 'Stored messages' });
    await table.locator('td.transform-cell').first().waitFor();
    const headers = await table.locator('thead th').allTextContents();
    assert.deepEqual(headers.slice(headers.indexOf('Payload') + 1, -1), ['temperature', 'line']);
    // Newest first: the message without a temperature, then 24 … 20.
    assert.deepEqual(await table.locator('td.transform-cell[data-field="temperature"]').allTextContents(), ['—', '24', '23', '22', '21', '20']);
    assert.deepEqual(await table.locator('td.transform-cell[data-field="line"]').allTextContents(), ['L9', 'L4', 'L3', 'L2', 'L1', 'L0']);
    await table.locator('tbody tr').nth(1).click();
    const fields = page.getByRole('dialog', { name: /^Message \d+$/ }).getByRole('table', { name: 'Transform fields' });
    await fields.getByRole('button', { name: 'Chart temperature' }).waitFor();
    await docScreenshot(page, 'topic-transform-fields');
    assert.deepEqual(await fields.locator('tr').allTextContents(), ['temperature24 chart', 'lineL4']);
    // Its chart button opens the chart of that field.
    await fields.getByRole('button', { name: 'Chart temperature' }).click();
    await page.waitForURL(/tab=chart&field=%40temperature|tab=chart&field=@temperature/);
    await page.locator('.chart-points', { hasText: '5 points' }).waitFor();
  });

  it('keeps the payload column readable beside a wide message detail: the History table scrolls sideways instead of squeezing it', async () => {
    const page = await suite.page({ viewport: { width: 1100, height: 900 } });
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=history`);
    const table = page.getByRole('table', { name: 'Stored messages' });
    await table.locator('td.transform-cell').first().waitFor();
    await table.locator('tbody tr').first().click();
    await page.getByRole('dialog', { name: /^Message \d+$/ }).waitFor();
    // Widen the detail as far as the divider allows.
    await page.locator('[role="separator"]').focus();
    for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowLeft');
    const payload = await table.locator('th.col-payload').boundingBox();
    assert.ok(payload, 'the payload column is laid out');
    assert.ok(payload.width >= 100, `the payload column is ${payload.width} px wide`);
    // What does not fit is reached by scrolling the table's box, the Publisher column included.
    const scroll = page.locator('.messages-scroll');
    const sizes = await scroll.evaluate((element) => ({ scrollWidth: element.scrollWidth, clientWidth: element.clientWidth }));
    assert.ok(sizes.scrollWidth > sizes.clientWidth, `the table scrolls sideways (${sizes.scrollWidth} > ${sizes.clientWidth})`);
    await table.locator('th.col-publisher').scrollIntoViewIfNeeded();
    const publisher = await table.locator('th.col-publisher').boundingBox();
    const box = await scroll.boundingBox();
    assert.ok(publisher && box && publisher.x + publisher.width <= box.x + box.width + 1, 'the Publisher column scrolls into view');
  });

  it('charts a numeric transform field from stored messages and from live ones read back from the log', async () => {
    const page = await suite.page();
    await logIn(page, undefined, `#/topics/${TOPIC}?tab=chart`);
    const offered = page.getByRole('group', { name: 'Numeric fields' });
    await offered.getByRole('button', { name: '@temperature' }).waitFor();
    // The JSON path of the same property is offered too; the text field `line` is not numeric.
    assert.deepEqual(await offered.getByRole('button').allTextContents(), ['@temperature', 'temperature']);
    await offered.getByRole('button', { name: '@temperature' }).click();
    await page.locator('.chart-points', { hasText: '5 points' }).waitFor();
    await page.getByText('5 stored, 0 live, 1 not numeric').waitFor();
    await page.locator('.chart-plot canvas').waitFor();
    await page.locator('.chart-live', { hasText: 'Live updates on' }).waitFor();
    await publisher.publishAsync(TOPIC, JSON.stringify({ temperature: 31.5, line: 'L5' }), { qos: 1 });
    await page.locator('.chart-points', { hasText: '6 points' }).waitFor();
    await page.getByText('5 stored, 1 live, 1 not numeric').waitFor();
    await page.locator('.chart-latest', { hasText: '@temperature = 31.5' }).waitFor();
  });

  it('links a numeric transform column of the integration table, in Tables, to the topic\'s chart of it', async () => {
    const described = await api('describeTopics', { topics: [TOPIC] });
    const { databaseName, tableName } = (described.result as { topics: Array<{ databaseName: string; tableName: string }> }).topics[0];
    const page = await suite.page();
    await logIn(page, undefined, `#/tables/${databaseName}/${tableName}?tab=structure`);
    const fields = page.getByRole('region', { name: 'Fields' });
    await fields.getByRole('link', { name: 'Chart temperature' }).waitFor();
    // Only the numeric transform field: not the text one, not the built-in columns.
    assert.deepEqual(await fields.getByRole('link').allTextContents(), ['chart']);
    await fields.getByRole('link', { name: 'Chart temperature' }).click();
    await page.waitForURL(/#\/topics\/plant\/tf\/sensor\?tab=chart&field=%40temperature/);
    await page.locator('.chart-points', { hasText: /^\d+ points$/ }).waitFor();
    await page.locator('.chart-latest', { hasText: '@temperature = ' }).waitFor();
  });
});
