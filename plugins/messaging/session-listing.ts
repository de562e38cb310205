/**
 * The sessions the listings show (listMqSessions, listMqSubscriptions; docs/cluster.md "Listing
 * sessions"): on one node, the sessions it holds. In a cluster, every session of the logical
 * server, each with the node that owns it, from what the stream replicates to every node:
 * - the sessions this node holds, as they are in its memory;
 * - a stored session another node owns (`session/<clientId>`): its account, kind, subscriptions,
 *   and whether it was connected when last written;
 * - a session another node owns that is not stored (a clean session, in its owner's memory only):
 *   its claim, which names the node and the account it was claimed for; connected, its
 *   subscriptions unknown here (null).
 * The same authorization as for the sessions held here (MessageCore.mayUseSession).
 */
import type { CommandContext } from '../../kernel/bus/command';
import type { MessageCore } from './message-core';
import type { StoredSession, SubscriptionOptions } from './session';

const SESSION_PREFIX = 'session/';

/** What a listing shows of a session (a Session held here is one). */
export interface SessionView {
  readonly clientId: string;
  /** The account the session belongs to ('' when its claim does not say: only `mq.takeover` shows it). */
  readonly owner: string;
  readonly kind: 'mqtt' | 'mqApi';
  readonly online: boolean;
  /** null: not known on this node (another node's clean session). */
  readonly subscriptionCount: number | null;
  readonly subscriptions: Iterable<[string, SubscriptionOptions]> | null;
}

export interface ListedSession {
  session: SessionView;
  /** In a cluster: the node that owns it (null: none claimed it, a session stored before the cluster); absent on one node. */
  node?: string | null;
}

/** The sessions the caller may use, of this node or (in a cluster) of the whole cluster, by client name. */
export function listedSessions(core: MessageCore, ctx: CommandContext): ListedSession[] {
  const cluster = core.cluster;
  const out: ListedSession[] = [];
  if (cluster === undefined) {
    for (const session of core.sessions.values()) if (core.mayUseSession(ctx, session)) out.push({ session });
    return sortByName(out);
  }
  const ownership = cluster.ownership;
  const here = ownership.node;
  for (const session of core.sessions.values()) if (core.mayUseSession(ctx, session)) out.push({ session, node: here });
  const stored = new Set<string>();
  for (const [key, value] of core.messageLog.state.entries(SESSION_PREFIX)) {
    const clientId = key.slice(SESSION_PREFIX.length);
    stored.add(clientId);
    if (core.sessions.has(clientId)) continue;
    const session = storedView(value as StoredSession);
    if (core.mayUseSession(ctx, session)) out.push({ session, node: ownership.ownerOf(clientId) ?? null });
  }
  for (const claim of ownership.claimed()) {
    // This node's own claim without a session here holds nothing (the sweep releases it).
    if (claim.node === here || core.sessions.has(claim.clientId) || stored.has(claim.clientId)) continue;
    const session: SessionView = { clientId: claim.clientId, owner: claim.account ?? '', kind: 'mqtt', online: true, subscriptionCount: null, subscriptions: null };
    if (core.mayUseSession(ctx, session)) out.push({ session, node: claim.node });
  }
  return sortByName(out);
}

/** A stored session of another node, as last written. */
function storedView(stored: StoredSession): SessionView {
  return {
    clientId: stored.clientId,
    owner: stored.owner,
    kind: stored.kind,
    // An MQ API session has no connection; an MQTT one written while connected counts as connected.
    online: stored.kind === 'mqtt' && stored.disconnectedAt === null,
    subscriptionCount: stored.subscriptions.length,
    subscriptions: stored.subscriptions,
  };
}

/** Sessions in client name order (code unit order, as the listings always gave them). */
export function byClientName(a: { clientId: string }, b: { clientId: string }): number {
  return a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0;
}

function sortByName(listed: ListedSession[]): ListedSession[] {
  return listed.sort((a, b) => byClientName(a.session, b.session));
}
