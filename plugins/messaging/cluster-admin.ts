/**
 * The admin actions on sessions and figures, cluster-wide (docs/cluster.md, "Admin actions across
 * the cluster"): describeMqSessions, getMqOverview, disconnectMqClient and deleteMqSessions act on
 * the whole logical server from any node. What another node holds in memory (its connections,
 * its sessions' statistics, its traffic) is asked of it over the cluster's request port
 * (kernel/messaging/node-requests.ts, NATS request/reply); a change is made by the node that holds
 * the session, on the request, never through a write of another node's.
 *
 * Authorization: the node the request came to decides with the caller's principal, as on one
 * node; the request carries that principal, and the node asked decides again with it before it
 * acts or shows anything, so a forwarded request never gets more than its caller could.
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { Principal } from '../../kernel/auth/principal';
import { EngineError } from '../../kernel/errors';
import type { NodeAnswer, NodeRequestPort } from '../../kernel/messaging/node-requests';
import type { NodePart } from '../../lib/explorer/api-types';
import type { MessageCore } from './message-core';
import type { StoredSession } from './session';

const SESSION_PREFIX = 'session/';

/** Request kinds (one per admin action's node-local part). */
export const NODE_REQUEST = {
  describeHeld: 'mq.describeHeld',
  describeOne: 'mq.describeOne',
  deleteOne: 'mq.deleteOne',
  overview: 'mq.overviewHere',
  totals: 'mq.totalsHere',
  disconnect: 'mq.disconnectHere',
  deleteSessions: 'mq.deleteSessionsHere',
} as const;

/** How many times a request follows a client id that moved to another node meanwhile. */
const MOVES_FOLLOWED = 3;

/** The caller, as a request carries it. */
export interface CallerOnWire {
  account: string;
  roles: string[];
}

/** A request about one session: the node asked answers its result, or where the session went. */
export type SessionReply<T> = { result: T } | { movedTo: string };

export function callerOnWire(ctx: CommandContext): CallerOnWire {
  return { account: ctx.principal.account, roles: [...ctx.principal.roles] };
}

/** The context a node asked acts in: the caller's principal, as the asking node authenticated it. */
export function contextFromWire(caller: CallerOnWire): CommandContext {
  const principal: Principal = { account: String(caller.account), roles: Array.isArray(caller.roles) ? caller.roles.map(String) : [] };
  return { principal, origin: 'cluster' };
}

/** The request port in a cluster (undefined on a single node). */
export function nodeRequests(core: MessageCore): NodeRequestPort | undefined {
  return core.cluster !== undefined && core.engine.has('nodeRequests') ? core.engine.need('nodeRequests') : undefined;
}

/**
 * Asks every other node (in parallel, each bounded by the request timeout): each answer, or the
 * mark of a node that did not answer. A node's refusal (an EngineError) marks it too, with its message.
 */
export async function askEveryNode<T>(requests: NodeRequestPort, kind: string, body: unknown): Promise<Array<NodeAnswer<T>>> {
  const nodes = await requests.otherNodes();
  return Promise.all(nodes.map((node) => requests.ask<T>(node, kind, body).catch((error: unknown): NodeAnswer<T> => (
    { node, answered: false, reason: error instanceof Error ? error.message : String(error), absent: false }
  ))));
}

/** Each node's part of a cluster-wide answer: this node's first, then the others by name. */
export function nodeParts(here: string, answers: Array<NodeAnswer<unknown>>): NodePart[] {
  return [{ node: here, answered: true }, ...answers.map((a): NodePart => (a.answered ? { node: a.node, answered: true } : { node: a.node, answered: false, reason: a.reason }))];
}

/**
 * deleteMqSessions for a node nobody listens for on NATS (its process is gone; its lease may not
 * have lapsed yet): its stored sessions the caller may use (without a connection when last
 * written, unless `disconnectedOnly` is false) are adopted here as a survivor adopts a dead node's
 * (a claim that holds only while that node still owns the session: a client that reconnected
 * elsewhere meanwhile, or a survivor's adoption applied first, keeps it), then ended here.
 * Resolves with the names ended (dryRun: those that would be).
 */
export async function endSessionsOfAbsentNode(core: MessageCore, ctx: CommandContext, node: string, p: { disconnectedOnly?: boolean; dryRun?: boolean }): Promise<string[]> {
  const cluster = core.cluster!;
  const chosen: string[] = [];
  for (const [key, value] of core.messageLog.state.entries(SESSION_PREFIX)) {
    const clientId = key.slice(SESSION_PREFIX.length);
    const stored = value as StoredSession | undefined;
    if (stored === undefined || cluster.ownership.ownerOf(clientId) !== node) continue;
    if (!core.mayUseSession(ctx, { clientId, owner: stored.owner })) continue;
    const connected = stored.kind === 'mqtt' && stored.disconnectedAt === null;
    if (p.disconnectedOnly !== false && connected) continue;
    chosen.push(clientId);
  }
  if (p.dryRun) return chosen;
  const ended = await Promise.all(chosen.map(async (clientId) => {
    if (!(await cluster.ownership.claim(clientId, node))) return undefined;
    await core.deleteSession(clientId);
    return clientId;
  }));
  return ended.filter((clientId): clientId is string => clientId !== undefined);
}

/**
 * Asks the node that owns `clientName` to act on it (its handler answers SessionReply): when the
 * client id moved on meanwhile, the request follows it to its new owner. Resolves with the
 * result, or undefined when the session turns out to be held here now (the caller acts here).
 * A node that does not answer is NODE_UNREACHABLE; the owner's refusal comes as itself.
 */
export async function askOwner<T>(core: MessageCore, requests: NodeRequestPort, clientName: string, what: string, kind: string, body: unknown): Promise<T | undefined> {
  const here = requests.node;
  let owner = core.cluster!.ownership.ownerOf(clientName);
  for (let hop = 0; hop <= MOVES_FOLLOWED; hop++) {
    if (owner === undefined) throw new EngineError('MQ_SESSION_NOT_FOUND', { clientName });
    if (owner === here) return undefined;
    const answer = await requests.ask<SessionReply<T>>(owner, kind, body);
    if (!answer.answered) throw new EngineError('NODE_UNREACHABLE', { node: owner, what, reason: answer.reason });
    const reply = answer.value;
    if ('result' in reply) return reply.result;
    owner = reply.movedTo;
  }
  throw new EngineError('NODE_UNREACHABLE', { node: owner ?? '', what, reason: `the session moved between nodes ${MOVES_FOLLOWED + 1} times while it was asked for` });
}

/**
 * On the node asked about a session it does not hold: where it went (a claim of another node was
 * applied meanwhile), or MQ_SESSION_NOT_FOUND.
 */
export function notHeldHere<T>(core: MessageCore, clientName: string): SessionReply<T> {
  const owner = core.cluster?.ownership.ownerOf(clientName);
  if (owner !== undefined && owner !== core.cluster!.ownership.node) return { movedTo: owner };
  throw new EngineError('MQ_SESSION_NOT_FOUND', { clientName });
}
