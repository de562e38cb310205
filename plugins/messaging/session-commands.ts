/**
 * Bus commands on client sessions (MQTT and MQ API alike: one registry of client names), for the
 * mq actions and plugins:
 * - `mq.createApiSession`   a session without a connection, read with `mq.readSession`
 * - `mq.readSession`        its next messages, from its position in the log (the position moves)
 * - `mq.changeSubscriptions` add / remove subscriptions of any session, also of a connected MQTT
 *                           client (it stays connected; retained messages follow per its options)
 * - `mq.deleteSession`      ends a session (a connected MQTT client holding it is disconnected)
 * - `mq.listSessions`, `mq.describeSessions`
 * A session is reached through `mq.connect` on `client:<name>` (the right to use that client
 * name, as an MQTT CONNECT needs), and a session another account owns also needs `mq.takeover` on
 * it, connected or not; each subscription also needs `mq.subscribe` on its filter. A name without
 * a session and another account's session without `mq.takeover` get the same answer (14237), so
 * names cannot be probed.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { CONNECT_COMMAND, type MessageCore } from './message-core';
import { MAX_SUBSCRIPTION_IDENTIFIER, MAX_SUBSCRIPTIONS, type Session, type SubscriptionOptions } from './session';
import { parseSharedFilter, topicFilterProblem, topicMatches } from '../../kernel/auth/topic-filter';
import type { BinaryFormat } from '../../lib/values/wire-format';
import { shapeMessage, type ShapeOptions } from './retrieve';
import type { SubscriptionChange, SubscriptionChangeResult } from '../../kernel/messaging/commands';
import type { MqSessionDescription, MqSessionDescriptions, MqSessionPage, MqSessionSummary, ShapedMessage, SubscriptionPage, SubscriptionRow } from '../../lib/explorer/api-types';
import { byClientName, listedSessions, type ListedSession, type SessionView } from './session-listing';
import { askEveryNode, askOwner, callerOnWire, contextFromWire, NODE_REQUEST, nodeParts, nodeRequests, notHeldHere, type CallerOnWire, type SessionReply } from './cluster-admin';
import type { NodeRequestPort } from '../../kernel/messaging/node-requests';
import { fencedError } from '../../kernel/messaging/session-ownership';

export type { SubscriptionChange, SubscriptionChangeResult } from '../../kernel/messaging/commands';

interface ReadParams extends ShapeOptions {
  clientName: string;
  maxMessages?: number;
  binaryFormat?: BinaryFormat;
}

const CLIENT_NAME = { type: 'string', minLength: 1, maxLength: 65_550 } as const;

/**
 * The session named `clientName` if the caller may use it (MessageCore.mayUseSession): the right
 * to use the name (`mq.connect`) is decided first, whether a session has it or not (12030 tells
 * nothing); then a name without a session and another account's session without `mq.takeover`
 * are the same MQ_SESSION_NOT_FOUND (14237, same message), so client names cannot be probed.
 */
export function sessionFor(engine: Engine, core: MessageCore, ctx: CommandContext, clientName: string): Session {
  engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
  const session = core.liveSession(clientName);
  if (session === undefined || !core.mayUseSession(ctx, session)) throw new EngineError('MQ_SESSION_NOT_FOUND', { clientName });
  return session;
}

const clientResource = (p: { clientName: string }) => ({ kind: 'client' as const, clientName: p.clientName });

/**
 * sessionFor, in a cluster first bringing an MQ API session another node owns to this node
 * (ClusterSessions.bringHere); another node's MQTT session answers NODE_BOUND.
 */
async function sessionHere(engine: Engine, core: MessageCore, ctx: CommandContext, clientName: string): Promise<Session> {
  const cluster = core.cluster;
  if (cluster !== undefined && !core.sessions.has(clientName)) {
    engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
    await cluster.bringHere(clientName, (session) => core.mayUseSession(ctx, session));
  }
  return sessionFor(engine, core, ctx, clientName);
}

/**
 * In a cluster, an MQ API session's change is in the stream before the caller hears of it, so
 * that the next call, on any node, claims it after that change and loads it with it; a change
 * another node's claim overtook answers NODE_BOUND (ClusterSessions.storeChange).
 */
async function stored(core: MessageCore, session: Session): Promise<void> {
  if (core.cluster !== undefined && session.kind === 'mqApi') await core.cluster.storeChange(session);
}

/** The read of each session in progress: the next one starts when it has settled. */
const readsInProgress = new WeakMap<Session, Promise<unknown>>();

/**
 * Runs the reads of one session one after the other. A read whose new position cannot be stored
 * puts it back; a second read started meanwhile would otherwise be undone with it (its messages
 * given out twice) or, if it also failed, put the position back only as far as the first read's
 * end (the first read's messages skipped).
 */
async function oneReadAtATime<T>(session: Session, read: () => Promise<T>): Promise<T> {
  const previous = readsInProgress.get(session);
  const mine = previous === undefined ? read() : previous.then(read, read);
  readsInProgress.set(session, mine);
  try {
    return await mine;
  } finally {
    if (readsInProgress.get(session) === mine) readsInProgress.delete(session);
  }
}

export function registerSessionCommands(engine: Engine, core: MessageCore): void {
  const bus = engine.bus;

  bus.register<{ clientName: string }, MqSessionSummary>({
    name: 'mq.createApiSession',
    summary: 'Create an MQ API session (a client name read through mq.readSession); 14221 when the name is in use.',
    params: { type: 'object', required: ['clientName'], additionalProperties: false, properties: { clientName: CLIENT_NAME } },
    access: 'authenticated',
    handler: async (p, ctx) => {
      engine.authorize(ctx, CONNECT_COMMAND, clientResource(p));
      await core.cluster?.claimName(p.clientName);
      const session = core.createApiSession(p.clientName, ctx.principal);
      await stored(core, session);
      return summary(session);
    },
  });

  bus.register<ReadParams, { clientName: string; messages: ShapedMessage[] }>({
    name: 'mq.readSession',
    summary: "A session's next messages from its position in the log (the position moves past them).",
    params: {
      type: 'object', required: ['clientName'], additionalProperties: false,
      properties: {
        clientName: CLIENT_NAME,
        maxMessages: { type: 'integer', minimum: 1, maximum: 100_000 },
        binaryFormat: { enum: ['hex', 'base64', 'byteArray'] },
        includeMessageMetadata: { type: 'boolean' },
        includeMqttProperties: { type: 'boolean' },
        includeTransformFields: { type: 'boolean' },
        includeOtherFields: { type: 'boolean' },
      },
    },
    access: 'authenticated',
    handler: async (p, ctx) => {
      const found = await sessionHere(engine, core, ctx, p.clientName);
      const messages = await oneReadAtATime(found, async () => {
        if (found.online) throw new EngineError('CLIENT_NAME_IN_USE', { clientName: p.clientName });
        const before = found.position;
        const read = core.readSession(found, p.maxMessages ?? 20, ctx.principal);
        try {
          await stored(core, found);
        } catch (error) {
          // Not stored (the stream cannot take writes now): the caller is refused, so the messages
          // are read again next time rather than lost. Reads of a session wait for each other, so
          // no later read has moved the position meanwhile.
          found.position = before;
          throw error;
        }
        return read;
      });
      // Transform fields (and the error / log they explain) are looked up only when asked for.
      const log = p.includeTransformFields || p.includeMessageMetadata ? engine.need('storage').messageLog : undefined;
      return {
        clientName: p.clientName,
        messages: messages.map((read) => shapeMessage(
          read.message, p, p.binaryFormat ?? read.binaryFormat ?? 'hex', read.expired, log?.transformValues(read.message.topic, read.message.sequence),
        )),
      };
    },
  });

  bus.register<{ clientName: string; changes: SubscriptionChange[] }, { subscriptions: SubscriptionChangeResult[] }>({
    name: 'mq.changeSubscriptions',
    summary: 'Add or remove subscriptions of a session (MQTT or MQ API), without disconnecting an MQTT client.',
    params: {
      type: 'object', required: ['clientName', 'changes'], additionalProperties: false,
      properties: {
        clientName: CLIENT_NAME,
        changes: {
          type: 'array', maxItems: 1000,
          items: {
            type: 'object', required: ['action', 'topicFilter'], additionalProperties: false,
            properties: {
              action: { enum: ['add', 'remove'] },
              topicFilter: { type: 'string' },
              qos: { enum: [0, 1, 2] },
              subscriptionIdentifier: { type: 'integer' },
              receiveMyMessages: { type: 'boolean' },
              receiveRetainedMessages: { enum: ['onSubscription', 'onNewSubscription', 'never'] },
              receiveRetainedFlagAsPublished: { type: 'boolean' },
              includeExpiredMessages: { type: 'boolean' },
              binaryFormat: { enum: ['hex', 'base64', 'byteArray'] },
            },
          },
        },
      },
    },
    access: 'authenticated',
    handler: async (p, ctx) => {
      const target = await sessionHere(engine, core, ctx, p.clientName);
      const topics = new KnownTopics(engine);
      const subscriptions = p.changes.map((change) => changeOne(core, topics, target, change, ctx));
      await stored(core, target);
      // In a cluster, a shared subscription added counts once its announcement is applied (as a SUBACK waits).
      await core.sharedMembershipSettled();
      return { subscriptions };
    },
  });

  bus.register<{ clientName: string; startFrom: 'head' | 'tail' | number | { since: string } }, MqSessionSummary & { position: number }>({
    name: 'mq.repositionSession',
    summary: "Move an MQ API session's position in the log: to its head, its tail, a message id or a time.",
    params: {
      type: 'object', required: ['clientName', 'startFrom'], additionalProperties: false,
      properties: {
        clientName: CLIENT_NAME,
        startFrom: {
          anyOf: [
            { enum: ['head', 'tail'] },
            { type: 'integer', minimum: 0 },
            { type: 'object', required: ['since'], additionalProperties: false, properties: { since: { type: 'string' } } },
          ],
        },
      },
    },
    access: 'authenticated',
    handler: async (p, ctx) => {
      const target = await sessionHere(engine, core, ctx, p.clientName);
      const position = core.repositionSession(target, p.startFrom);
      await stored(core, target);
      return { ...summary(target), position };
    },
  });

  bus.register<{ clientName: string }, { deleted: true }>({
    name: 'mq.deleteSession',
    summary: 'End a session (MQTT or MQ API); a connected MQTT client holding it is disconnected.',
    params: { type: 'object', required: ['clientName'], additionalProperties: false, properties: { clientName: CLIENT_NAME } },
    access: 'authenticated',
    handler: async (p, ctx) => {
      // In a cluster, an MQTT session another node holds is ended by that node (cluster-admin.ts).
      const there = await onItsNode<{ deleted: true }>(engine, core, ctx, p.clientName, NODE_REQUEST.deleteOne);
      if (there !== undefined) return there;
      const target = await sessionHere(engine, core, ctx, p.clientName);
      const removed = core.deleteSession(p.clientName);
      // In a cluster the removal is in the stream before the answer: a call on another node then
      // finds the session gone. A claim of another node applied ahead of it keeps the session
      // alive there: then the answer is NODE_BOUND, not `deleted`.
      if (core.cluster !== undefined && target.kind === 'mqApi' && removed !== undefined) await core.cluster.storeRemoval(p.clientName, removed);
      return { deleted: true };
    },
  });

  bus.register<{ filter?: string; offset?: number; limit?: number }, MqSessionPage>({
    name: 'mq.listSessions',
    reads: true,
    summary: 'The sessions (MQTT and MQ API) whose client names the caller may use, by client name; `filter` keeps names containing it (case-insensitive).',
    params: {
      type: 'object', additionalProperties: false,
      properties: {
        filter: { type: 'string' },
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 100_000 },
      },
    },
    access: 'authenticated',
    handler: (p, ctx) => {
      const filter = p.filter ? p.filter.toLowerCase() : '';
      // In a cluster: every node's sessions, each with its node (session-listing.ts).
      const all = listedSessions(core, ctx).filter((listed) => !filter || listed.session.clientId.toLowerCase().includes(filter));
      const offset = p.offset ?? 0;
      const page = p.limit === undefined ? all.slice(offset) : all.slice(offset, offset + p.limit);
      return { total: all.length, sessions: page.map(listedSummary) };
    },
  });

  bus.register<{ filter?: string; offset?: number; limit?: number }, SubscriptionPage>({
    name: 'mq.listSubscriptions',
    reads: true,
    summary: 'Every subscription of the sessions the caller may use, by client name then topic filter; `filter` keeps those whose topic filter or client name contains it (case-insensitive).',
    params: {
      type: 'object', additionalProperties: false,
      properties: {
        filter: { type: 'string' },
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 10_000 },
      },
    },
    access: 'authenticated',
    handler: (p, ctx) => {
      const filter = p.filter ? p.filter.toLowerCase() : '';
      const offset = p.offset ?? 0;
      const limit = p.limit ?? 500;
      const page: SubscriptionRow[] = [];
      let total = 0;
      // In a cluster: the subscriptions every node's sessions hold, as far as the stream tells
      // (another node's clean session keeps its subscriptions in that node's memory: none listed).
      for (const { session: s, node } of listedSessions(core, ctx)) {
        if (s.subscriptions === null || s.subscriptionCount === 0) continue;
        const byClient = filter !== '' && s.clientId.toLowerCase().includes(filter);
        const filters = [...s.subscriptions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        for (const [topicFilter, options] of filters) {
          if (filter && !byClient && !topicFilter.toLowerCase().includes(filter)) continue;
          if (total >= offset && page.length < limit) page.push({ clientName: s.clientId, kind: s.kind, connected: s.online, topicFilter, ...options, ...(node !== undefined ? { node } : {}) });
          total++;
        }
      }
      return { total, subscriptions: page };
    },
  });

  bus.register<{ clientNames?: string[] }, MqSessionDescriptions>({
    name: 'mq.describeSessions',
    summary: 'Subscriptions, subscribed topics and statistics of sessions (all the caller may use when no names are given; in a cluster, of every node).',
    params: {
      type: 'object', additionalProperties: false,
      properties: { clientNames: { type: 'array', items: CLIENT_NAME, maxItems: 1000 } },
    },
    access: 'authenticated',
    handler: async (p, ctx) => {
      const requests = nodeRequests(core);
      if (p.clientNames === undefined) {
        const here = visible(core, ctx).map((s) => describe(engine, core, s));
        if (requests === undefined) return { sessions: here };
        return describeEveryNode(requests, here, ctx);
      }
      const sessions = await Promise.all(p.clientNames.map((clientName) => describeNamed(engine, core, ctx, clientName)));
      return { sessions };
    },
  });

  // In a cluster, what another node asks of this one (cluster-admin.ts), for the caller it names.
  const requests = nodeRequests(core);
  requests?.answer(NODE_REQUEST.describeHeld, (body) => {
    const ctx = contextFromWire((body as { caller: CallerOnWire }).caller);
    return visible(core, ctx).map((s) => describe(engine, core, s));
  });
  requests?.answer(NODE_REQUEST.describeOne, (body): SessionReply<MqSessionDescription> => {
    const { caller, clientName } = body as { caller: CallerOnWire; clientName: string };
    const ctx = contextFromWire(caller);
    if (!core.sessions.has(clientName)) {
      engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
      return notHeldHere(core, clientName);
    }
    return { result: describe(engine, core, sessionFor(engine, core, ctx, clientName)) };
  });
  requests?.answer(NODE_REQUEST.deleteOne, async (body): Promise<SessionReply<{ deleted: true }>> => {
    const { caller, clientName } = body as { caller: CallerOnWire; clientName: string };
    const ctx = contextFromWire(caller);
    if (!core.sessions.has(clientName)) {
      engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
      return notHeldHere(core, clientName);
    }
    sessionFor(engine, core, ctx, clientName);
    // As on one node: a connected client is closed (MQTT 5: 0x8E); answered once the removal is in the stream.
    await core.deleteSession(clientName);
    return { result: { deleted: true } };
  });
}

/**
 * In a cluster, an action on an MQTT session another node holds (one that is not an MQ API
 * session: those are brought here, sessionHere) is asked of that node, for the caller, who is
 * authorized here first as on one node. Undefined: the session is this node's to act on.
 */
async function onItsNode<T>(engine: Engine, core: MessageCore, ctx: CommandContext, clientName: string, kind: string): Promise<T | undefined> {
  const cluster = core.cluster;
  const requests = nodeRequests(core);
  if (requests === undefined || cluster === undefined || core.sessions.has(clientName)) return undefined;
  const owner = cluster.ownership.ownerOf(clientName);
  if (owner === undefined || owner === cluster.ownership.node || core.state.storedSession(clientName)?.kind === 'mqApi') return undefined;
  if (cluster.ownership.fenced) throw fencedError();
  engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
  return askOwner<T>(core, requests, clientName, 'MQTT session', kind, { caller: callerOnWire(ctx), clientName });
}

/**
 * describeMqSessions without names in a cluster: this node's sessions with every other node's
 * (each node describes those it holds that the caller may use), by client name; a node that did
 * not answer is marked in `nodes` and its sessions are missing.
 */
async function describeEveryNode(requests: NodeRequestPort, here: MqSessionDescription[], ctx: CommandContext): Promise<MqSessionDescriptions> {
  const answers = await askEveryNode<MqSessionDescription[]>(requests, NODE_REQUEST.describeHeld, { caller: callerOnWire(ctx) });
  const byName = new Map<string, MqSessionDescription>();
  // A session no node ever claimed (stored before the cluster) is held by every node: described once.
  for (const description of here) byName.set(description.clientName, description);
  for (const answer of answers) {
    if (!answer.answered) continue;
    for (const description of answer.value) if (!byName.has(description.clientName)) byName.set(description.clientName, description);
  }
  const sessions = [...byName.values()].sort((a, b) => byClientName({ clientId: a.clientName }, { clientId: b.clientName }));
  return { sessions, nodes: nodeParts(requests.node, answers) };
}

/**
 * One named session described: in a cluster, an MQTT session another node holds is described by
 * that node (it holds its connection and statistics), for the caller, who is authorized here
 * first as on one node; an MQ API session another node owns is brought here (sessionHere).
 */
async function describeNamed(engine: Engine, core: MessageCore, ctx: CommandContext, clientName: string): Promise<MqSessionDescription> {
  const there = await onItsNode<MqSessionDescription>(engine, core, ctx, clientName, NODE_REQUEST.describeOne);
  return there ?? describe(engine, core, await sessionHere(engine, core, ctx, clientName));
}

/** The sessions this node holds that the caller may use, by client name (listedSessions: the whole cluster's). */
export function visible(core: MessageCore, ctx: CommandContext): Session[] {
  const out: Session[] = [];
  for (const s of core.sessions.values()) if (core.mayUseSession(ctx, s)) out.push(s);
  return out.sort(byClientName);
}

function summary(s: SessionView): MqSessionSummary {
  return { clientName: s.clientId, kind: s.kind, owner: s.owner, connected: s.online, subscriptionCount: s.subscriptionCount };
}

/** A listed session's summary, with its node in a cluster. */
function listedSummary(listed: ListedSession): MqSessionSummary {
  const out = summary(listed.session);
  if (listed.node !== undefined) out.node = listed.node;
  return out;
}

function describe(engine: Engine, core: MessageCore, s: Session): MqSessionDescription {
  const now = engine.clock.now();
  const seconds = Math.max(1, (now - s.createdAt) / 1000);
  const subscriptions = s.subscriptionCount === 0 ? [] : [...s.subscriptions].map(([topicFilter, options]) => ({ topicFilter, ...options }));
  const subscribedTopics = new KnownTopics(engine).matching(subscriptions.map((sub) => sub.topicFilter));
  return {
    ...summary(s),
    ...(core.cluster !== undefined ? { node: core.cluster.ownership.node } : {}),
    subscriptions,
    subscribedTopics,
    publishedTopics: [...(s.publishedTopics ?? [])].sort(),
    messagesPublished: s.published,
    messagesReceived: s.received,
    lastPublishedAt: isoTime(s.lastPublishedAt),
    lastReceivedAt: isoTime(s.lastReceivedAt),
    publishRate: s.published / seconds,
    receiveRate: s.received / seconds,
    position: s.position,
    expiryInterval: s.expiryInterval,
    connectedSince: s.online && s.connection ? isoTime(s.connection.since) : null,
    disconnectedSince: s.online || s.disconnectedAt === null ? null : isoTime(s.disconnectedAt),
    address: s.connection?.facts?.address || null,
    protocolVersion: s.connection?.facts?.protocolVersion ?? null,
    keepAliveSeconds: s.connection?.facts?.keepAliveSeconds ?? null,
    inflight: s.inflightCount,
    queued: Math.max(0, core.messageLog.lastSequence() - s.position),
  };
}

/** An engine time (epoch ms; 0: never) as the answers write it. */
function isoTime(ms: number): string | null {
  return ms ? new Date(ms).toISOString() : null;
}

/** One add or remove; its own errorCode (0: done) so one bad filter does not undo the others. */
function changeOne(core: MessageCore, topics: KnownTopics, target: Session, change: SubscriptionChange, ctx: CommandContext): SubscriptionChangeResult {
  const { topicFilter } = change;
  const result: SubscriptionChangeResult = { topicFilter, matchingTopics: [], errorCode: 0, errorMessage: '' };
  try {
    const problem = topicFilterProblem(topicFilter);
    if (problem) throw new EngineError('INVALID_TOPIC', { topic: topicFilter, reason: problem });
    if (change.action === 'remove') {
      core.unsubscribe(target, topicFilter);
    } else {
      if (change.subscriptionIdentifier !== undefined && (change.subscriptionIdentifier < 1 || change.subscriptionIdentifier > MAX_SUBSCRIPTION_IDENTIFIER)) {
        throw new EngineError('INVALID_PARAMETER', { param: 'subscriptionIdentifier', reason: `between 1 and ${MAX_SUBSCRIPTION_IDENTIFIER}` });
      }
      if (target.subscriptionCount >= MAX_SUBSCRIPTIONS && !target.subscriptions.has(topicFilter)) {
        throw new EngineError('INVALID_PARAMETER', { param: 'topicFilter', reason: `a session holds at most ${MAX_SUBSCRIPTIONS} subscriptions` });
      }
      if (!core.maySubscribe(ctx.principal, topicFilter)) {
        throw new EngineError('NOT_AUTHORIZED', { account: ctx.principal.account, command: 'mq.subscribe', resource: `topic:${topicFilter}` });
      }
      const retained = change.receiveRetainedMessages ?? 'onSubscription';
      const options: SubscriptionOptions = {
        qos: change.qos ?? 2,
        noLocal: change.receiveMyMessages === false,
        retainAsPublished: change.receiveRetainedFlagAsPublished !== false,
        retainHandling: retained === 'never' ? 2 : retained === 'onNewSubscription' ? 1 : 0,
      };
      if (change.subscriptionIdentifier !== undefined) options.subscriptionIdentifier = change.subscriptionIdentifier;
      if (change.includeExpiredMessages !== undefined) options.includeExpired = change.includeExpiredMessages;
      if (change.binaryFormat !== undefined) options.binaryFormat = change.binaryFormat;
      const existed = core.subscribe(target, topicFilter, options);
      core.sendRetained(target, topicFilter, options, existed);
    }
    result.matchingTopics = topics.matching([topicFilter]);
  } catch (error) {
    const engineError = error instanceof EngineError ? error : new EngineError('INTERNAL', { reason: String(error) });
    result.errorCode = engineError.code;
    result.errorMessage = engineError.message;
  }
  return result;
}

/** Topics of the log a result lists (at most this many). */
const LISTED_TOPICS = 1000;

/**
 * The log's topics matching filters, for results (matchingTopics, subscribedTopics): a filter
 * without wildcards is looked up; the sorted topic list is read once per command, and only when
 * a wildcard needs it.
 */
class KnownTopics {
  private sorted?: string[];

  constructor(private readonly engine: Engine) {}

  matching(filters: string[]): string[] {
    const plain = filters.map((filter) => parseSharedFilter(filter)?.filter ?? filter);
    const log = this.engine.need('storage').messageLog;
    if (plain.every((filter) => !filter.includes('+') && !filter.includes('#'))) {
      return [...new Set(plain)].filter((topic) => log.getTopic(topic) !== undefined).sort().slice(0, LISTED_TOPICS);
    }
    this.sorted ??= log.listTopics().map((entry) => entry.topic);
    const out: string[] = [];
    for (const topic of this.sorted) {
      if (out.length >= LISTED_TOPICS) break;
      if (plain.some((filter) => topicMatches(filter, topic))) out.push(topic);
    }
    return out;
  }
}
