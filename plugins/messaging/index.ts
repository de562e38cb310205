/**
 * plugins/messaging: the message core (docs/message-core.md) over the message log
 * (`engine.need('storage').messageLog`): subscription tree, router, retained store and client
 * sessions, shared by the MQTT broker and the mq actions; the `mq.publish` command (the one
 * publish path of the actions and plugins), `mq.retrieve`, the stateless read of one topic's
 * messages (getMessagesFromMqTopic), and `topic.delete` (topic-deletion.ts).
 */
import { definePlugin } from '../../kernel/plugin';
import { MessageCore } from './message-core';
import { registerPublishCommand } from './publish-command';
import { registerRetrieveCommand } from './retrieve';
import { registerSessionCommands } from './session-commands';
import { registerExploreCommands } from './explore-commands';
import { registerTopicDeletion } from './topic-deletion';
import { startRetention } from './retention';
import { registerLogStatus, registerTopicConfiguration } from './topic-configuration';
import { SysTopics } from './sys-topics';
import { addMessagingMetrics } from './metrics';

declare module '../../kernel/services' {
  interface EngineServices {
    messaging: MessageCore;
  }
}

export default definePlugin({
  name: 'messaging',
  description: 'the message core over the message log (subscriptions, router, retained messages, sessions), mq.publish and mq.retrieve',
  register(engine) {
    registerRetrieveCommand(engine);
    const core = new MessageCore(engine);
    engine.provide('messaging', core);
    engine.provide('messageCore', core);
    registerPublishCommand(engine, core);
    registerSessionCommands(engine, core);
    registerExploreCommands(engine, core, registerTopicDeletion(engine, core));
    core.load();
    addMessagingMetrics(engine.metrics, core);
    const sys = new SysTopics(core);
    engine.onStart(() => sys.start());
    engine.onClose(async () => {
      sys.stop();
      await core.close();
    });
    const retention = startRetention(engine, core); // after the close above: stops first
    engine.provide('topicRetention', retention);
    registerTopicConfiguration(engine, retention);
    registerLogStatus(engine, retention);
  },
});
