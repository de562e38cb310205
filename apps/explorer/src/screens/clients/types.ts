/** Shapes of the session actions (docs/actions.md: listMqSessions, describeMqSessions), shared with the server. */
export type { MqSessionDescription, MqSessionPage, MqSessionSubscription, MqSessionSummary } from '../../../../../lib/explorer/api-types.js';

export const KIND_TEXT: Record<string, string> = { mqtt: 'MQTT', mqApi: 'MQ API' };
