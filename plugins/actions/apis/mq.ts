/**
 * The `mq` api. Empty until the message broker lands: every mq action answers 14701 (unknown
 * action) for now. publishMessagesToMq, getMessagesFromMqTopic, subscribeToMq and the MQ session
 * actions will map here to the `mq.*` bus commands.
 */
import type { ActionDefinition } from '../action-table';

export const mqActions: readonly ActionDefinition[] = [];
