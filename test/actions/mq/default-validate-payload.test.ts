/**
 * `validateMqttPayload` defaults to `defaultValidateMqttPayload` (docs/actions.md): the session's
 * (createSession / alterSession), set from the setting `default_validate_mqtt_payload`. Checked
 * through publishMessagesToMq over real HTTP: a `json` payload that is not JSON is refused (12012)
 * when validating, and stored as its text when not.
 */
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../../helpers/server';
import { MQTT_PORTS } from '../../mqtt/mqtt-helpers';
import { unique } from '../../mqtt/pubsub-helpers';
import { admin, fails, login, ok } from '../action-client';
import { MQ_PLUGINS, mq, topicMessages } from './mq-client';

function notJson(token: string, topic: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return mq('publishMessagesToMq', token, { topic, messages: [{ payload: 'not json' }], ...extra });
}

describe('mq actions: defaultValidateMqttPayload', function () {
  describe('with the setting at its default (true)', function () {
    let server: TestServer;
    before(async function () { server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS }); });
    after(async function () { await server?.close(); });

    it('validates unless the call or the session says otherwise', async function () {
      const token = await login(server);
      const topic = unique('validate/default');
      await fails(server, notJson(token, topic), 12012);
      assert.equal((await ok(server, admin('alterSession', token, {}))).defaultValidateMqttPayload, true, 'the session shows its default');

      // The session's default, from createSession, then changed by alterSession.
      const lax = await login(server, 'admin', 'ADMIN', { defaultValidateMqttPayload: false });
      await ok(server, notJson(lax, topic));
      assert.deepEqual((await topicMessages(server, lax, topic)).map((m) => m.payload), ['not json']);
      await fails(server, notJson(lax, topic, { validateMqttPayload: true }), 12012);
      const altered = await ok(server, admin('alterSession', lax, { defaultValidateMqttPayload: true }));
      assert.equal(altered.defaultValidateMqttPayload, true);
      await fails(server, notJson(lax, topic), 12012);
      await fails(server, admin('alterSession', lax, { defaultValidateMqttPayload: 'no' }), 12012);
    });
  });

  describe('with default_validate_mqtt_payload false', function () {
    let server: TestServer;
    before(async function () { server = await startServer({ plugins: MQ_PLUGINS, ...MQTT_PORTS, default_validate_mqtt_payload: false }); });
    after(async function () { await server?.close(); });

    it('new sessions do not validate unless the call asks to', async function () {
      const token = await login(server);
      const session = await ok(server, admin('alterSession', token, {}));
      assert.equal(session.defaultValidateMqttPayload, false);
      const topic = unique('validate/off');
      await ok(server, notJson(token, topic));
      assert.deepEqual((await topicMessages(server, token, topic)).map((m) => m.payload), ['not json']);
      await fails(server, notJson(token, topic, { validateMqttPayload: true }), 12012);
    });
  });
});
