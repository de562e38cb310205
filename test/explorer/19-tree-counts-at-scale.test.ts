/**
 * browseTopics on a server whose topics were never counted: it counts for a bounded time and says
 * how many topics wait (`countsPending`), instead of reading every topic's index in one call
 * (100,000 topics took 4 s, during which the server answered nothing); the background count then
 * completes the figures.
 */
import { strict as assert } from 'node:assert';
import { setTimeout as delay } from 'node:timers/promises';
import { call, startServer, type TestServer } from '../helpers/server';

const TOPICS = 20_000;
const PER_CALL = 5_000;

describe('explorer: topic tree counts at scale', function () {
  this.timeout(120_000);
  let server: TestServer;
  let token: string;

  async function api(action: string, params: Record<string, unknown>): Promise<any> {
    const answer = await call('POST', `${server.http}/api`, { auth: null, body: { api: 'mq', action, authToken: token, params } });
    assert.equal(answer.json.errorCode, 0, answer.text);
    return answer.json.result;
  }

  before(async () => {
    server = await startServer();
    token = (await call('POST', `${server.http}/api`, { auth: null, body: { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } } })).json.authToken;
    for (let start = 0; start < TOPICS; start += PER_CALL) {
      const messages = [];
      for (let i = start; i < start + PER_CALL; i++) messages.push({ topic: `many/b${i % 10}/t${i}`, payload: i });
      await api('publishMessagesToMq', { messages });
    }
  });

  after(() => server?.close());

  it('answers before every topic is counted, says how many wait, and the background count completes them', async () => {
    const first = await api('browseTopics', {});
    const many = first.nodes.find((node: { name: string }) => node.name === 'many');
    assert.equal(many.topicCount, TOPICS, 'every topic is listed');
    assert.ok(first.countsPending > 0, `the first call counted all ${TOPICS} topics at once: ${JSON.stringify(first).slice(0, 300)}`);
    assert.ok(many.messageCount < TOPICS);
    // Read again as the page does (it reads the level again a second later) until the count is done.
    let answer = first;
    while (answer.countsPending !== undefined) {
      await delay(200);
      answer = await api('browseTopics', {});
    }
    assert.equal(answer.nodes.find((node: { name: string }) => node.name === 'many').messageCount, TOPICS);
  });
});
