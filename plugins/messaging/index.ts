/**
 * plugins/messaging: the message core's bus commands over the message log
 * (`engine.need('storage').messageLog`). Today: `mq.retrieve`, the stateless read of one topic's
 * messages (getMessagesFromMqTopic). It removes nothing and moves no session's position.
 */
import { definePlugin } from '../../kernel/plugin';
import { registerRetrieveCommand } from './retrieve';

export default definePlugin({
  name: 'messaging',
  description: 'message commands over the message log: mq.retrieve',
  register(engine) {
    registerRetrieveCommand(engine);
  },
});
