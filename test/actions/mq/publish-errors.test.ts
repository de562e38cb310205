/**
 * publishMessagesToMq refusals: every bad input and every limit of the spec has its error code,
 * and a call with one bad message publishes nothing (the log holds no message of it).
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../../helpers/server';
import { unique } from '../../mqtt/pubsub-helpers';
import { admin, fails, login, ok } from '../action-client';
import { mq, startMqServer, storedCount } from './mq-client';

const INVALID_PARAMETER = 12012;
const MISSING_PARAMETER = 12025;
const INVALID_TOPIC = 14243;
const NOT_AUTHORIZED = 12030;
const TABLE_NOT_FOUND = 4023;

describe('mq actions: publishMessagesToMq errors and limits', function () {
  let server: TestServer;
  let token: string;

  before(async function () {
    server = await startMqServer();
    token = await login(server);
  });

  after(async function () {
    await server?.close();
  });

  /** Publishes a good message and then `bad`, expects `code`, and checks nothing was stored. */
  async function refused(bad: Record<string, unknown>, code: number, call: Record<string, unknown> = {}): Promise<any> {
    const topic = unique('bad');
    const response = await fails(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1 }, bad], ...call }), code);
    assert.equal(storedCount(server, topic), 0, `nothing of the call is stored (${JSON.stringify(bad)})`);
    return response;
  }

  it('refuses a payload that does not match its declared type; nothing of the call is published', async function () {
    await refused({ payload: 'not json' }, INVALID_PARAMETER);
    await refused({ payload: 12, mqttPayloadType: 'utf8' }, INVALID_PARAMETER);
    await refused({ payload: 'XYZ', mqttPayloadType: 'binary' }, INVALID_PARAMETER);
    await refused({ payload: 'ABC', mqttPayloadType: 'binary' }, INVALID_PARAMETER); // odd hex
    await refused({ payload: '!!!', mqttPayloadType: 'binary', binaryFormat: 'base64' }, INVALID_PARAMETER);
    await refused({ payload: 'string', mqttPayloadType: 'variantObject' }, INVALID_PARAMETER);
    await refused({ payload: { type: 'nope', value: 1 }, mqttPayloadType: 'variantObject' }, INVALID_PARAMETER);
    await refused({ payload: { type: 'binary', value: 'zz', valueEncoding: 'hex' }, mqttPayloadType: 'variantObject' }, INVALID_PARAMETER);
    await refused({ payload: 1, mqttPayloadType: 'xml' }, INVALID_PARAMETER);
    await refused({ payload: 1, binaryFormat: 'octal' }, INVALID_PARAMETER);
    await refused({ payload: '4142', mqttPayloadType: 'binary', binaryFormat: 'hex', payloadFormatIndicator: true, correlationData: 'ZZ' }, INVALID_PARAMETER);
    await refused({ payload: 'FF', mqttPayloadType: 'binary', payloadFormatIndicator: true }, INVALID_PARAMETER); // not UTF-8
    await refused({}, MISSING_PARAMETER);
  });

  it('refuses byteArray elements outside 0 to 255', async function () {
    for (const element of [256, -1, 1.5, '1']) {
      const response = await refused({ payload: [1, element], mqttPayloadType: 'binary', binaryFormat: 'byteArray' }, INVALID_PARAMETER);
      assert.match(response.errorMessage, /messages\[1\]\.payload/);
    }
  });

  it('enforces the limits: topic, correlationData, userProperties keys, clientName', async function () {
    const topic = unique('limit');
    await fails(server, mq('publishMessagesToMq', token, { topic: 'x'.repeat(65_501), messages: [{ payload: 1 }] }), INVALID_PARAMETER);
    await refused({ payload: 1, correlationData: 'AB'.repeat(65_501) }, INVALID_PARAMETER);
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1, correlationData: 'AB'.repeat(65_500) }] }));
    await refused({ payload: 1, userProperties: [{ key: 'k'.repeat(129), value: 'v' }] }, INVALID_PARAMETER);
    await refused({ payload: 1, userProperties: [{ key: '', value: 'v' }] }, INVALID_PARAMETER);
    await refused({ payload: 1, userProperties: [{ key: 'k', value: 3 }] }, INVALID_PARAMETER);
    await refused({ payload: 1, userProperties: { key: 'k', value: 'v' } }, INVALID_PARAMETER);
    await ok(server, mq('publishMessagesToMq', token, { topic, messages: [{ payload: 1, userProperties: [{ key: 'k'.repeat(128), value: 'v' }] }] }));
    await refused({ payload: 1 }, INVALID_PARAMETER, { clientName: 'c'.repeat(65_551) });
    assert.equal(storedCount(server, topic), 2);
  });

  it('refuses bad topics, qos, expiry, response topics and locations', async function () {
    await refused({ payload: 1 }, INVALID_TOPIC, { topic: 'a/#' });
    await refused({ payload: 1, topic: 'a/+/b' }, INVALID_TOPIC);
    await refused({ payload: 1, topic: '' }, INVALID_PARAMETER);
    await refused({ payload: 1, qos: 3 }, INVALID_PARAMETER);
    await refused({ payload: 1, retain: 'yes' }, INVALID_PARAMETER);
    await refused({ payload: 1, expirySeconds: -1 }, INVALID_PARAMETER);
    await refused({ payload: 1, expirySeconds: 4_294_967_296 }, INVALID_PARAMETER);
    await refused({ payload: 1, responseTopic: 'reply/#' }, INVALID_TOPIC);
    await refused({ payload: 1, contentType: 7 }, INVALID_PARAMETER);
    await refused({ payload: 1 }, INVALID_PARAMETER, { databaseName: '' });
    await refused({ payload: 1 }, INVALID_PARAMETER, { ownerName: '' });
    await refused({ payload: 1 }, INVALID_PARAMETER, { ownerName: 'o'.repeat(65) });
    await refused({ payload: 1 }, INVALID_PARAMETER, { tableName: 'mqtt_msg_x' });
    await fails(server, mq('publishMessagesToMq', token, { messages: [{ payload: 1 }] }), MISSING_PARAMETER);
    await fails(server, mq('publishMessagesToMq', token, { topic: 't', messages: [] }), INVALID_PARAMETER);
    await fails(server, mq('publishMessagesToMq', token, { tableName: 'no_such_table', messages: [{ payload: 1 }] }), TABLE_NOT_FOUND);
    // $SYS topics are the broker's own (mq.publish refuses them).
    await fails(server, mq('publishMessagesToMq', token, { topic: '$SYS/x', messages: [{ payload: 1 }] }), INVALID_TOPIC);
  });

  it('authorizes every topic of the call before storing anything', async function () {
    await ok(server, admin('createAccount', token, { username: 'mq-reader', password: 'pw-reader', roles: ['reader'] }));
    const reader = await login(server, 'mq-reader', 'pw-reader');
    const topic = unique('auth');
    await fails(server, mq('publishMessagesToMq', reader, { topic, messages: [{ payload: 1 }] }), NOT_AUTHORIZED);
    assert.equal(storedCount(server, topic), 0);
  });
});
