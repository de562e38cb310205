/**
 * mq actions for looking at and operating the broker (the explorer's screens use them), over the
 * messaging plugin's explore commands (plugins/messaging/explore-commands.ts): browseTopics,
 * getMqOverview, listRetainedMessages, deleteRetainedMessages, listMqSubscriptions, disconnectMqClient,
 * deleteMqSessions. Not in the specification: our additions (docs/actions.md, docs/decisions.md).
 */
import type { ActionCall, ActionDefinition } from '../action-table';
import { enumValue, RESPONSE_OPTION_ENUMS } from '../response-options';
import { exec, schema, type Params } from './db/db-call';

const STRING = { type: 'string' };
const BOOLEAN = { type: 'boolean' };
const OFFSET = { type: 'integer', minimum: 0 };

/** The params a command takes, leaving out those the caller did not give. */
function given(p: Params, names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) if (p[name] !== undefined) out[name] = p[name];
  return out;
}

export const mqExploreActions: readonly ActionDefinition[] = [
  {
    action: 'browseTopics',
    summary: 'One level of the topic tree: the children of `prefix` (the root when absent) with topic and message counts, last message time and rate.',
    params: schema({ prefix: { type: ['string', 'null'] }, filter: STRING, offset: OFFSET, limit: { type: 'integer', minimum: 1, maximum: 5000 } }),
    handler: (call: ActionCall) => exec(call, 'mq.browseTopics', given(call.params as Params, ['prefix', 'filter', 'offset', 'limit'])),
  },
  {
    action: 'getMqOverview',
    summary: 'Clients, topics, subscriptions, stored messages, message rates, tables and the ten busiest topics.',
    params: schema({}),
    handler: (call: ActionCall) => exec(call, 'mq.overview', {}),
  },
  {
    action: 'getLogStatus',
    summary: "The message log's size against log_max_bytes: messages trimmed for it, and those kept because a session still owes them (docs/operations.md).",
    params: schema({}),
    handler: (call: ActionCall) => exec(call, 'log.status', {}),
  },
  {
    action: 'listRetainedMessages',
    summary: 'Retained messages whose topics match `topicFilter` (default `#`), in topic order, paged with offset and limit.',
    params: schema({ topicFilter: STRING, offset: OFFSET, limit: { type: 'integer', minimum: 1, maximum: 1000 }, binaryFormat: STRING }),
    handler(call: ActionCall) {
      const p = call.params as Params;
      const binaryFormat = p.binaryFormat !== undefined ? enumValue(p.binaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'binaryFormat') : call.options.binaryFormat;
      return exec(call, 'mq.listRetained', { ...given(p, ['topicFilter', 'offset', 'limit']), binaryFormat });
    },
  },
  {
    action: 'deleteRetainedMessages',
    summary: 'Forget the retained messages whose topics match `topicFilter` (their messages stay in the log); `dryRun` only counts them.',
    params: schema({ topicFilter: STRING, dryRun: BOOLEAN }, ['topicFilter']),
    handler: (call: ActionCall) => exec(call, 'mq.deleteRetained', given(call.params as Params, ['topicFilter', 'dryRun'])),
  },
  {
    action: 'listMqSubscriptions',
    summary: 'Every subscription of the sessions the caller may use (topic filter, client, QoS, options), by client name; `filter` keeps those whose topic filter or client name contains it.',
    params: schema({ filter: STRING, offset: OFFSET, limit: { type: 'integer', minimum: 1, maximum: 10_000 } }),
    handler: (call: ActionCall) => exec(call, 'mq.listSubscriptions', given(call.params as Params, ['filter', 'offset', 'limit'])),
  },
  {
    action: 'disconnectMqClient',
    summary: 'Close a connected MQTT client (MQTT 5: DISCONNECT 0x98 "administrative action"); its session stays as its expiry says.',
    params: schema({ clientName: STRING }, ['clientName']),
    handler: (call: ActionCall) => exec(call, 'mq.disconnectClient', given(call.params as Params, ['clientName'])),
  },
  {
    action: 'deleteMqSessions',
    summary: 'End every session the caller may use that has no connection (disconnectedOnly false: every one); `dryRun` only counts them.',
    params: schema({ disconnectedOnly: BOOLEAN, dryRun: BOOLEAN }),
    handler: (call: ActionCall) => exec(call, 'mq.deleteSessions', given(call.params as Params, ['disconnectedOnly', 'dryRun'])),
  },
];
