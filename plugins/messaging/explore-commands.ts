/**
 * Bus commands for looking at and operating the message core (the explorer uses them; so may any
 * client, through the mq actions):
 * - `mq.browseTopics`   one level of the topic tree with counts, last time and rate per node
 * - `mq.overview`       clients, topics, subscriptions, message rates, the busiest topics
 * - `mq.listRetained`   retained messages by topic filter, paged
 * - `mq.deleteRetained` forget the retained messages matching a filter (or only count them)
 * - `mq.disconnectClient` close a connected client (MQTT 5: DISCONNECT 0x98)
 * - `mq.deleteSessions` end every disconnected session the caller may use (or only count them)
 * Each topic is authorized on its own (`topic.list` to see it, `mq.retrieve` to read a retained
 * message, `mq.publish` to clear one, as an empty retained PUBLISH would need); a client on
 * `mq.connect` (+ `mq.takeover` for another account's) like the other session commands.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { BinaryFormat } from '../../lib/values/wire-format';
import type { MessageCore } from './message-core';
import { hasExpired, shapeMessage } from './retrieve';
import { topicFilterProblem, topicMatches } from '../../kernel/auth/topic-filter';
import { previewOf } from './topic-preview';
import { TopicCounts } from './topic-counts';
import type {
  BrowseTopicsResult, BusyTopic, DeleteRetainedResult, DeleteSessionsResult, DisconnectClientResult, NodePart, Overview, OverviewNode, RetainedMessage, RetainedPage, TopicNodeSummary,
} from '../../lib/explorer/api-types';
import type { TopicDeletedListener } from './topic-deletion';
import { lowerBound } from '../../lib/sorted';
import { sessionFor, visible } from './session-commands';
import { askEveryNode, askOwner, callerOnWire, contextFromWire, endSessionsOfAbsentNode, NODE_REQUEST, nodeParts, nodeRequests, notHeldHere, type CallerOnWire, type SessionReply } from './cluster-admin';
import type { NodeRequestPort } from '../../kernel/messaging/node-requests';
import { fencedError } from '../../kernel/messaging/session-ownership';
import { CONNECT_COMMAND } from '../../kernel/messaging/session-types';

const LISTED = 1000;
/** Longest step of the background count of every topic. */
const WARM_STEP_MS = 10;
/** The longest a browseTopics call spends counting topics not counted yet (the rest: countsPending). */
const COUNT_BUDGET_MS = 50;
const BUSIEST = 10;

export function registerExploreCommands(engine: Engine, core: MessageCore, deletions: { onDeleted(listener: TopicDeletedListener): void }): void {
  const bus = engine.bus;
  const counts = new TopicCounts(engine.need('storage').messageLog, core.activity);
  deletions.onDeleted((topic) => counts.forget(topic));
  const rates = new RateSampler();
  const mayList = (ctx: CommandContext, topic: string): boolean => core.allowed(ctx.principal, 'topic.list', topic);
  // Once someone watches, every topic is counted in the background (10 ms steps), so the first
  // look at the tree's root finds its counts ready instead of taking them all at once.
  let warming = false;
  let closing = false;
  engine.onClose(async () => { closing = true; });
  const warmCounts = (): void => {
    if (warming) return;
    warming = true;
    const topics = engine.need('storage').messageLog.listTopics();
    let next = 0;
    const step = (): void => {
      try {
        const until = performance.now() + WARM_STEP_MS;
        while (next < topics.length && !closing && performance.now() < until) counts.of(topics[next++].topic, engine.clock.now());
      } catch {
        next = topics.length; // a topic deleted meanwhile, or the log closing: the next look counts
      }
      if (next < topics.length && !closing && core.activity.watching) setImmediate(step);
      else warming = false;
    };
    setImmediate(step);
  };

  bus.register<{ prefix?: string | null; filter?: string; offset?: number; limit?: number }, BrowseTopicsResult>({
    name: 'mq.browseTopics',
    reads: true,
    summary: 'One level of the topic tree (the children of `prefix`, the root when absent) with topic and message counts, last message time and rate per node.',
    params: {
      type: 'object', additionalProperties: false,
      properties: {
        prefix: { type: ['string', 'null'] },
        filter: { type: 'string', maxLength: 65_500 },
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 5000 },
      },
    },
    access: 'authenticated',
    handler: (p, ctx) => {
      core.activity.watch();
      const prefix = p.prefix ?? null;
      const start = prefix === null ? '' : `${prefix}/`;
      // A filter with + or # is an MQTT topic filter (whole topics match); otherwise a substring.
      const wildcard = p.filter !== undefined && /[+#]/.test(p.filter);
      if (wildcard) {
        const problem = topicFilterProblem(p.filter!);
        if (problem) throw new EngineError('INVALID_TOPIC', { topic: p.filter, reason: problem });
      }
      const filter = p.filter ? (wildcard ? p.filter : p.filter.toLowerCase()) : '';
      const passes = (topic: string): boolean => !filter || (wildcard ? topicMatches(filter, topic) : topic.toLowerCase().includes(filter));
      const nodes = new Map<string, TopicNodeSummary>();
      const now = engine.clock.now();
      const log = engine.need('storage').messageLog;
      const all = log.listTopics();
      counts.prune(all.length);
      let topics = 0;
      // Topics never counted cost an index read each (100,000 took 4 s, blocking the server): counted
      // for at most COUNT_BUDGET_MS here, the rest in the background; the answer says how many wait.
      const countUntil = performance.now() + COUNT_BUDGET_MS;
      let mayCount = true;
      let seen = 0;
      let countsPending = 0;
      const place = (topic: string, count: number, lastMessageTime: string | null): void => {
        const rest = topic.slice(start.length);
        const slash = rest.indexOf('/');
        const name = slash < 0 ? rest : rest.slice(0, slash);
        let node = nodes.get(name);
        if (!node) {
          node = { name, path: start + name, isTopic: false, hasChildren: false, topicCount: 0, messageCount: 0, lastMessageTime: null, messagesPerSecond: 0 };
          nodes.set(name, node);
        }
        if (slash < 0) node.isTopic = true;
        else node.hasChildren = true;
        topics++;
        node.topicCount++;
        node.messageCount += count;
        if (lastMessageTime !== null && (node.lastMessageTime === null || lastMessageTime > node.lastMessageTime)) node.lastMessageTime = lastMessageTime;
        node.messagesPerSecond += core.activity.rate(topic);
      };
      // The topics under the prefix are one run of the sorted list.
      for (let i = prefix === null ? 0 : lowerBound(all, start, (entry) => entry.topic); i < all.length; i++) {
        const topic = all[i].topic;
        if (prefix !== null && !topic.startsWith(start)) break;
        if (!passes(topic) || !mayList(ctx, topic)) continue;
        if (mayCount && (++seen & 63) === 0 && performance.now() > countUntil) mayCount = false;
        const stats = counts.of(topic, now, mayCount);
        if (!stats) countsPending++;
        place(topic, stats?.count ?? 0, stats?.lastMessageTime ?? null);
      }
      // $SYS topics are never stored: they are the server's retained figures, shown to whoever may list them.
      if (prefix === null || start.startsWith('$SYS/')) {
        for (const [topic, entry] of core.retained.list(prefix === null ? '$SYS/' : start)) {
          if (!entry.message || !passes(topic) || !mayList(ctx, topic)) continue;
          place(topic, 0, new Date(entry.message.createdAt).toISOString().slice(0, 23));
        }
      }
      const sorted = [...nodes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const offset = p.offset ?? 0;
      const page = sorted.slice(offset, offset + (p.limit ?? 500));
      // The page's topics: a retained marker, and a preview of the last value for those who may read it.
      for (const node of page) {
        if (!node.isTopic) continue;
        const retained = core.retained.get(node.path);
        node.retained = retained !== undefined;
        if (!core.allowed(ctx.principal, 'mq.retrieve', node.path)) continue;
        if (retained?.message) node.preview = previewOf(retained.message.payload);
        else {
          const last = log.readTopic(node.path, { limit: 1, reverse: true })[0];
          if (last) node.preview = previewOf(last.payload);
        }
      }
      // Out of time: the topics left (never counted, or due for their recount) are counted in the background.
      if (!mayCount) warmCounts();
      return { total: sorted.length, topics, nodes: page, ...(countsPending > 0 ? { countsPending } : {}) };
    },
  });

  // The figures every stream and caller shares, taken at most once a second (tables every 10 s or
  // when the topics change: listing them sorts every integration table).
  let figures: { at: number; value: Omit<Overview, 'busiestTopics'>; busiest: Overview['busiestTopics'] } | undefined;
  let tables = { at: 0, count: 0, topics: -1 };
  const currentFigures = () => {
    // How fresh the figures are is real elapsed time (performance.now), not engine time.
    const now = performance.now();
    if (figures && now - figures.at < 1000) return figures;
    const { connected, total } = core.sessionCounts();
    const storage = engine.need('storage');
    const topics = storage.messageLog.topicCount();
    // Integration tables come and go with topics: counted again when those change.
    if (now - tables.at >= 10_000 || topics !== tables.topics) {
      let count = 0;
      for (const database of storage.listDatabases()) count += storage.listTables(database).length;
      tables = { at: now, count, topics };
    }
    const { stats } = core;
    const [inRate, outRate] = rates.sample(stats.messagesReceived, stats.messagesSent);
    figures = {
      at: now,
      value: {
        clientsConnected: connected,
        clientsDisconnected: total - connected,
        topics,
        subscriptions: core.tree.size,
        // The server's own $SYS topics are not counted.
        retainedMessages: core.retained.size - core.retained.list('$SYS/').length,
        storedMessages: core.storedMessages(),
        messagesReceived: stats.messagesReceived,
        messagesSent: stats.messagesSent,
        messagesInPerSecond: inRate,
        messagesOutPerSecond: outRate,
        tables: tables.count,
        uptimeSeconds: Math.floor((engine.clock.now() - core.startedAt) / 1000),
      },
      busiest: core.activity.busiest(BUSIEST * 4),
    };
    return figures;
  };

  const watchFigures = (): void => {
    const started = !core.activity.watching;
    core.activity.watch();
    if (started) warmCounts();
  };
  const requests = nodeRequests(core);
  // In a cluster: this node's figures, for the node whose overview adds them up (each node's own;
  // the busiest topics unfiltered: the asking node filters them for its caller).
  requests?.answer(NODE_REQUEST.overview, (): NodeFigures => {
    watchFigures();
    const { value, busiest } = currentFigures();
    return { value, busiest };
  });
  // The cluster's figures: one round of asking every node at a time, shared by the callers that
  // come while it runs (the explorer's event streams ask every second; a node that does not answer
  // holds a round up to cluster_request_timeout_ms). Each node's own figures are at most a second
  // old (currentFigures); a round is never reused once answered, so a node stopped since is marked.
  let clusterRound: Promise<ClusterFigures> | undefined;
  const clusterFigures = (cluster: NodeRequestPort): Promise<ClusterFigures> => {
    if (clusterRound !== undefined) return clusterRound;
    const round = addUpNodes(cluster, currentFigures());
    clusterRound = round;
    const done = (): void => { if (clusterRound === round) clusterRound = undefined; };
    round.then(done, done);
    return round;
  };

  bus.register<Record<string, never>, Overview>({
    name: 'mq.overview',
    summary: 'Clients, topics, subscriptions, stored messages, message rates, tables and the busiest topics (in a cluster: of every node, with each node\'s own figures).',
    params: { type: 'object', additionalProperties: false, properties: {} },
    access: 'authenticated',
    handler: async (_p, ctx) => {
      watchFigures();
      const figures: NodeFigures & { nodes?: OverviewNode[] } = requests === undefined ? currentFigures() : await clusterFigures(requests);
      const busiestTopics = figures.busiest.filter((entry) => mayList(ctx, entry.topic)).slice(0, BUSIEST);
      return { ...figures.value, busiestTopics, ...(figures.nodes !== undefined ? { nodes: figures.nodes } : {}) };
    },
  });

  // The server's running totals alone, for samplers (the explorer's overview history): unlike
  // mq.overview it does not start the per-topic activity recording, so sampling costs the publish
  // path nothing while nobody watches. In a cluster, every node's, added up, with each node's own
  // (a sampler takes rates per node: a node missing from one sample does not bend the rates).
  const totalsHere = (): Totals => {
    const { connected, total } = core.sessionCounts();
    return { messagesReceived: core.stats.messagesReceived, messagesSent: core.stats.messagesSent, clientsConnected: connected, clientsDisconnected: total - connected };
  };
  requests?.answer(NODE_REQUEST.totals, (): Totals => totalsHere());
  bus.register<Record<string, never>, Totals & { nodes?: Array<NodePart & Partial<Totals>> }>({
    name: 'mq.totals',
    summary: 'Messages received and sent since the start, clients connected and kept (no per-topic figures; in a cluster, of every node).',
    params: { type: 'object', additionalProperties: false, properties: {} },
    access: 'authenticated',
    handler: async () => {
      const own = totalsHere();
      if (requests === undefined) return own;
      const answers = await askEveryNode<Totals>(requests, NODE_REQUEST.totals, {});
      const sum = { ...own };
      const nodes: Array<NodePart & Partial<Totals>> = [{ node: requests.node, answered: true, ...own }];
      for (const answer of answers) {
        if (!answer.answered) {
          nodes.push({ node: answer.node, answered: false, reason: answer.reason });
          continue;
        }
        for (const key of TOTALS) sum[key] += Number(answer.value[key]) || 0;
        nodes.push({ node: answer.node, answered: true, ...answer.value });
      }
      return { ...sum, nodes };
    },
  });

  bus.register<{ topicFilter?: string; offset?: number; limit?: number; binaryFormat?: BinaryFormat }, RetainedPage>({
    name: 'mq.listRetained',
    reads: true,
    summary: 'Retained messages whose topics match a filter (default `#`), in topic order, paged.',
    params: {
      type: 'object', additionalProperties: false,
      properties: {
        topicFilter: { type: 'string', minLength: 1 },
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 1000 },
        binaryFormat: { enum: ['hex', 'base64', 'byteArray'] },
      },
    },
    access: 'authenticated',
    handler: (p, ctx) => {
      const topics = retainedTopics(core, p.topicFilter ?? '#').filter((topic) => core.allowed(ctx.principal, 'mq.retrieve', topic));
      const offset = p.offset ?? 0;
      const log = engine.need('storage').messageLog;
      const now = engine.clock.now();
      const messages: RetainedMessage[] = [];
      for (const topic of topics.slice(offset, offset + (p.limit ?? 100))) {
        const entry = core.retained.get(topic);
        const logged = entry && entry.sequence !== 0 ? log.read(entry.sequence) : undefined;
        if (!logged) continue;
        // With metadata, MQTT properties and other fields: every field of a retained message but its size.
        const shaped = shapeMessage(logged, { includeMessageMetadata: true, includeMqttProperties: true, includeOtherFields: true }, p.binaryFormat ?? 'hex', hasExpired(logged, now)) as RetainedMessage;
        shaped.size = logged.payload.type === 'binary' ? logged.payload.value.length : Buffer.byteLength(String(logged.payload.value));
        messages.push(shaped);
      }
      return { total: topics.length, messages };
    },
  });

  bus.register<{ topicFilter: string; dryRun?: boolean }, DeleteRetainedResult>({
    name: 'mq.deleteRetained',
    summary: 'Forget the retained messages whose topics match a filter (the messages stay in the log); dryRun only counts them.',
    params: {
      type: 'object', required: ['topicFilter'], additionalProperties: false,
      properties: { topicFilter: { type: 'string', minLength: 1 }, dryRun: { type: 'boolean' } },
    },
    access: 'authenticated',
    handler: (p, ctx) => {
      const topics = retainedTopics(core, p.topicFilter).filter((topic) => core.mayPublish(ctx.principal, topic));
      if (!p.dryRun) for (const topic of topics) core.clearRetained(topic);
      return { count: topics.length, topics: topics.slice(0, LISTED) };
    },
  });

  bus.register<{ clientName: string }, DisconnectClientResult>({
    name: 'mq.disconnectClient',
    summary: 'Close a connected client (MQTT 5 clients get DISCONNECT 0x98); its session stays as its expiry says.',
    params: { type: 'object', required: ['clientName'], additionalProperties: false, properties: { clientName: { type: 'string', minLength: 1, maxLength: 65_550 } } },
    access: 'authenticated',
    handler: async (p, ctx) => {
      // In a cluster, a client another node serves is closed by that node (cluster-admin.ts).
      if (requests !== undefined && !core.sessions.has(p.clientName)) {
        if (core.fenced()) throw fencedError();
        engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName: p.clientName });
        const there = await askOwner<DisconnectClientResult>(core, requests, p.clientName, 'MQTT connection', NODE_REQUEST.disconnect, { caller: callerOnWire(ctx), clientName: p.clientName });
        if (there !== undefined) return there;
      }
      return disconnectHere(ctx, p.clientName);
    },
  });
  /** Closes the client's connection held here, as the caller (MQTT 5: DISCONNECT 0x98). */
  const disconnectHere = (ctx: CommandContext, clientName: string): DisconnectClientResult => {
    sessionFor(engine, core, ctx, clientName);
    const holder = engine.clientConnections.holder(clientName);
    if (!holder) throw new EngineError('MQ_SESSION_NOT_FOUND', { clientName });
    holder.disconnect();
    return { clientName, disconnected: true };
  };
  requests?.answer(NODE_REQUEST.disconnect, (body): SessionReply<DisconnectClientResult> => {
    const { caller, clientName } = body as { caller: CallerOnWire; clientName: string };
    const ctx = contextFromWire(caller);
    if (!core.sessions.has(clientName)) {
      engine.authorize(ctx, CONNECT_COMMAND, { kind: 'client', clientName });
      return notHeldHere(core, clientName);
    }
    return { result: disconnectHere(ctx, clientName) };
  });

  bus.register<{ disconnectedOnly?: boolean; dryRun?: boolean }, DeleteSessionsResult>({
    name: 'mq.deleteSessions',
    summary: 'End every session the caller may use that has no connection (or, with disconnectedOnly false, every one); dryRun only counts them.',
    params: {
      type: 'object', additionalProperties: false,
      properties: { disconnectedOnly: { type: 'boolean' }, dryRun: { type: 'boolean' } },
    },
    access: 'authenticated',
    handler: async (p, ctx) => {
      if (requests === undefined) {
        const { names } = deleteHere(ctx, p);
        return { count: names.length, clientNames: names.slice(0, LISTED) };
      }
      // In a cluster every node ends the sessions it holds, for the caller (cluster-admin.ts).
      const asked = askEveryNode<string[]>(requests, NODE_REQUEST.deleteSessions, { caller: callerOnWire(ctx), disconnectedOnly: p.disconnectedOnly, dryRun: p.dryRun });
      const here = deleteHere(ctx, p);
      const answers = await asked;
      // Ended here once their removals are in the stream (a listing on any node then leaves them out).
      await Promise.all(here.removed);
      // A session no node ever claimed (stored before the cluster) is held, and ended, by every node: counted once.
      const names = new Set(here.names);
      const parts = nodeParts(requests.node, answers);
      for (const answer of answers) {
        if (answer.answered) {
          for (const name of answer.value) names.add(name);
        } else if (answer.absent) {
          // Its process is gone: its sessions are adopted here and ended (cluster-admin.ts).
          for (const name of await endSessionsOfAbsentNode(core, ctx, answer.node, p)) names.add(name);
          const part = parts.find((entry) => entry.node === answer.node)!;
          part.reason = `${answer.reason}; its stored sessions were ${p.dryRun ? 'counted' : 'adopted and ended'} by ${requests.node}`;
        }
      }
      const sorted = [...names].sort();
      return { count: sorted.length, clientNames: sorted.slice(0, LISTED), nodes: parts };
    },
  });
  /** Ends the sessions held here that the caller may use (only those without a connection unless disconnectedOnly is false). */
  const deleteHere = (ctx: CommandContext, p: { disconnectedOnly?: boolean; dryRun?: boolean }): { names: string[]; removed: Array<Promise<void>> } => {
    const names = visible(core, ctx).filter((session) => p.disconnectedOnly === false || !session.online).map((session) => session.clientId);
    const removed: Array<Promise<void>> = [];
    if (!p.dryRun) {
      for (const name of names) {
        // A connected client is closed as an operator's act (0x98), then its session ends.
        engine.clientConnections.holder(name)?.disconnect();
        const removal = core.deleteSession(name);
        if (removal !== undefined) removed.push(removal);
      }
    }
    return { names, removed };
  };
  requests?.answer(NODE_REQUEST.deleteSessions, async (body): Promise<string[]> => {
    const { caller, disconnectedOnly, dryRun } = body as { caller: CallerOnWire; disconnectedOnly?: boolean; dryRun?: boolean };
    const here = deleteHere(contextFromWire(caller), { disconnectedOnly: disconnectedOnly === false ? false : undefined, dryRun: dryRun === true });
    await Promise.all(here.removed);
    return here.names;
  });
}

/** A node's running totals (mq.totals). */
interface Totals {
  messagesReceived: number;
  messagesSent: number;
  clientsConnected: number;
  clientsDisconnected: number;
}

const TOTALS = ['messagesReceived', 'messagesSent', 'clientsConnected', 'clientsDisconnected'] as const;

/** One node's figures, as it sends them to the node adding them up. */
interface NodeFigures {
  value: Omit<Overview, 'busiestTopics' | 'nodes'>;
  busiest: BusyTopic[];
}

interface ClusterFigures extends NodeFigures {
  nodes: OverviewNode[];
}

/** Figures each node counts for itself: the cluster's are their sums. The others (topics, stored and retained messages, tables) are the same on every node. */
const PER_NODE = ['clientsConnected', 'clientsDisconnected', 'subscriptions', 'messagesReceived', 'messagesSent', 'messagesInPerSecond', 'messagesOutPerSecond'] as const;

/** This node's figures with every other node's: the totals, each node's own, the busiest topics of all. */
async function addUpNodes(requests: NodeRequestPort, own: NodeFigures): Promise<ClusterFigures> {
  const answers = await askEveryNode<NodeFigures>(requests, NODE_REQUEST.overview, {});
  const value = { ...own.value };
  const nodeFigures = (figures: NodeFigures['value']): Partial<OverviewNode> => {
    const out: Partial<OverviewNode> = { uptimeSeconds: figures.uptimeSeconds };
    for (const key of PER_NODE) out[key] = figures[key];
    return out;
  };
  const nodes: OverviewNode[] = [{ node: requests.node, answered: true, ...nodeFigures(own.value) }];
  const rates = new Map<string, number>();
  for (const entry of own.busiest) rates.set(entry.topic, entry.messagesPerSecond);
  for (const answer of answers) {
    if (!answer.answered) {
      nodes.push({ node: answer.node, answered: false, reason: answer.reason });
      continue;
    }
    const figures = answer.value.value;
    for (const key of PER_NODE) value[key] += Number(figures[key]) || 0;
    nodes.push({ node: answer.node, answered: true, ...nodeFigures(figures) });
    for (const entry of answer.value.busiest) rates.set(entry.topic, (rates.get(entry.topic) ?? 0) + entry.messagesPerSecond);
  }
  const busiest = [...rates].map(([topic, messagesPerSecond]) => ({ topic, messagesPerSecond })).sort((a, b) => b.messagesPerSecond - a.messagesPerSecond);
  return { value, busiest, nodes };
}

/** Retained topics matching a filter, sorted; a filter that is not valid is 14243. */
function retainedTopics(core: MessageCore, filter: string): string[] {
  const problem = topicFilterProblem(filter);
  if (problem) throw new EngineError('INVALID_TOPIC', { topic: filter, reason: problem });
  if (filter.startsWith('$share/')) throw new EngineError('INVALID_TOPIC', { topic: filter, reason: 'a shared subscription is not a topic filter here' });
  // A topic name is looked up; a filter walks the retained store's trie (it sorts what matches).
  if (!/[+#]/.test(filter)) return core.retained.get(filter) ? [filter] : [];
  return core.retained.list(filter).map(([topic]) => topic);
}

/** Message rates from the broker's counters, sampled when asked (at most one sample per 500 ms). */
class RateSampler {
  private samples: Array<{ at: number; received: number; sent: number }> = [];

  /** [in, out] messages per second over the last few seconds. */
  sample(received: number, sent: number): [number, number] {
    const now = performance.now(); // rates over real elapsed time, not engine time
    const last = this.samples[this.samples.length - 1];
    if (!last || now - last.at >= 500) this.samples.push({ at: now, received, sent });
    while (this.samples.length > 2 && now - this.samples[1].at >= 5000) this.samples.shift();
    const first = this.samples[0];
    const seconds = (now - first.at) / 1000;
    if (seconds < 0.5) return [0, 0];
    return [(received - first.received) / seconds, (sent - first.sent) / seconds];
  }
}
