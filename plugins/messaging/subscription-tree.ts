/**
 * Topic filters → subscribers, protocol-neutral (MQTT 3.1.1 §4.7, MQTT 5 §4.7 and §4.8.2).
 *
 * Filters live in a trie of levels, so `match(topic)` walks at most the topic's levels (plus the
 * `+` and `#` branches) instead of testing every filter; results are cached per topic and the
 * cache is dropped whole on any change. Shared filters `$share/<ShareName>/<filter>` sit on the
 * node of their filter part, grouped by share name.
 */
import { parseSharedFilter, topicFilterProblem } from '../../kernel/auth/topic-filter';

/** How many topics' matches are kept; the oldest goes first when full. */
const MATCH_CACHE_LIMIT = 50_000;

export interface DirectMatch<S, O> {
  readonly subscriber: S;
  /** The filter as subscribed (never a `$share/...` one). */
  readonly filter: string;
  readonly options: O;
}

export interface GroupMember<S, O> {
  readonly subscriber: S;
  readonly options: O;
}

/**
 * The subscribers of one shared filter: one group per (share name, filter) [MQTT 5 §4.8.2].
 * The same object lives as long as the group has members, so its round-robin `cursor` survives
 * cache clears; `members` is replaced (never mutated) when membership changes.
 */
export interface SharedGroup<S, O> {
  readonly share: string;
  /** The filter part, without `$share/<ShareName>/`. */
  readonly filter: string;
  readonly members: ReadonlyArray<GroupMember<S, O>>;
  /** Where the next round-robin pick starts (see `pickMember`). */
  cursor: number;
}

/**
 * Everything subscribed that matches one topic. Frozen and shared through the cache: callers must
 * not mutate it. A subscriber with two overlapping filters appears once per filter in `direct`.
 */
export interface TopicMatches<S, O> {
  readonly direct: ReadonlyArray<DirectMatch<S, O>>;
  readonly groups: ReadonlyArray<SharedGroup<S, O>>;
  /** The tree's `generation` when matched: the match still holds while it is the same. */
  readonly generation: number;
  /** What the tree's user derives from this match (the message core: receive decisions), dropped with it. */
  memo: unknown;
}

export interface SubscribedFilter<O> {
  /** As subscribed, `$share/...` included. */
  readonly filter: string;
  readonly options: O;
}

/**
 * The member that gets the next message of a shared group: round robin from the group's cursor,
 * the first online member, else (nobody online) the member at the cursor, whose session keeps it.
 * Undefined only for an empty group.
 */
export function pickMember<S, O>(group: SharedGroup<S, O>, isOnline: (subscriber: S) => boolean): GroupMember<S, O> | undefined {
  const count = group.members.length;
  if (count === 0) return undefined;
  const start = group.cursor % count;
  for (let step = 0; step < count; step++) {
    const index = (start + step) % count;
    const member = group.members[index];
    if (isOnline(member.subscriber)) {
      group.cursor = index + 1;
      return member;
    }
  }
  group.cursor = start + 1;
  return group.members[start];
}

interface MutableGroup<S, O> extends SharedGroup<S, O> {
  members: ReadonlyArray<GroupMember<S, O>>;
}

class FilterNode<S, O> {
  readonly children = new Map<string, FilterNode<S, O>>();
  /** Plain subscriptions whose filter ends at this node. */
  readonly subscribers = new Map<S, O>();
  /** Shared subscriptions whose filter part ends here, by share name. */
  readonly groups = new Map<string, MutableGroup<S, O>>();

  constructor(readonly filter: string) {}

  isEmpty(): boolean {
    return this.children.size === 0 && this.subscribers.size === 0 && this.groups.size === 0;
  }
}

export class SubscriptionTree<S, O> {
  private readonly root = new FilterNode<S, O>('');
  /** subscriber → its filters as subscribed → options: replace detection, removeAll, filtersOf. */
  private readonly bySubscriber = new Map<S, Map<string, O>>();
  private readonly cache = new Map<string, TopicMatches<S, O>>();
  private count = 0;
  private changes = 0;
  /** Told when a shared group gains or loses a member (cluster-shares.ts announces it). */
  groupSizeChanged: ((share: string, filter: string, members: number) => void) | null = null;

  /** Bumped by every change of the subscriptions: matches of an older generation are stale. */
  get generation(): number {
    return this.changes;
  }

  /** Number of (subscriber, filter) pairs, shared ones included. */
  get size(): number {
    return this.count;
  }

  /**
   * Subscribes; true when it replaced this subscriber's subscription on this exact filter
   * [MQTT-3.8.4-3]. Throws a RangeError for an invalid filter (callers validate first).
   */
  add(subscriber: S, filter: string, options: O): boolean {
    const problem = topicFilterProblem(filter);
    if (problem !== null) throw new RangeError(`${problem}: ${JSON.stringify(filter)}`);
    let filters = this.bySubscriber.get(subscriber);
    if (filters === undefined) {
      filters = new Map();
      this.bySubscriber.set(subscriber, filters);
    }
    const replaced = filters.has(filter);
    filters.set(filter, options);
    if (!replaced) this.count++;

    const shared = parseSharedFilter(filter);
    const node = this.nodeFor(shared === null ? filter : shared.filter);
    if (shared === null) {
      node.subscribers.set(subscriber, options);
    } else {
      let group = node.groups.get(shared.share);
      if (group === undefined) {
        group = { share: shared.share, filter: shared.filter, members: Object.freeze([]), cursor: 0 };
        node.groups.set(shared.share, group);
      }
      // Replace keeps the member's place in the round robin.
      const member = Object.freeze({ subscriber, options });
      const index = group.members.findIndex((m) => m.subscriber === subscriber);
      const members = group.members.slice();
      if (index >= 0) members[index] = member;
      else members.push(member);
      group.members = Object.freeze(members);
      if (index < 0) this.groupSizeChanged?.(shared.share, shared.filter, members.length);
    }
    this.changed();
    return replaced;
  }

  /** Unsubscribes one filter (as subscribed); false when there was no such subscription. */
  remove(subscriber: S, filter: string): boolean {
    const filters = this.bySubscriber.get(subscriber);
    if (filters === undefined || !filters.has(filter)) return false;
    filters.delete(filter);
    if (filters.size === 0) this.bySubscriber.delete(subscriber);
    this.count--;
    this.detach(subscriber, filter);
    this.changed();
    return true;
  }

  /** Unsubscribes every filter of the subscriber (session ended). */
  removeAll(subscriber: S): void {
    const filters = this.bySubscriber.get(subscriber);
    if (filters === undefined) return;
    this.bySubscriber.delete(subscriber);
    for (const filter of filters.keys()) this.detach(subscriber, filter);
    this.count -= filters.size;
    this.changed();
  }

  /** The subscriber's filters as subscribed, with their options (session persistence, listing). */
  filtersOf(subscriber: S): SubscribedFilter<O>[] {
    const filters = this.bySubscriber.get(subscriber);
    if (filters === undefined) return [];
    return [...filters].map(([filter, options]) => ({ filter, options }));
  }

  private changed(): void {
    this.changes++;
    this.cache.clear();
  }

  /** Every subscription matching a topic name; cached until the next change (its lists are frozen). */
  match(topic: string): TopicMatches<S, O> {
    const cached = this.cache.get(topic);
    if (cached !== undefined) return cached;
    const direct: DirectMatch<S, O>[] = [];
    const groups: SharedGroup<S, O>[] = [];
    const collect = (node: FilterNode<S, O>): void => {
      for (const [subscriber, options] of node.subscribers) direct.push(Object.freeze({ subscriber, filter: node.filter, options }));
      for (const group of node.groups.values()) groups.push(group);
    };
    const levels = topic.split('/');
    // Leading wildcards don't match topics starting with `$` [MQTT-4.7.2-1].
    const dollar = topic.startsWith('$');
    const walk = (node: FilterNode<S, O>, depth: number): void => {
      const wildcardsAllowed = depth > 0 || !dollar;
      if (wildcardsAllowed) {
        // `#` also matches the parent level: `sport/#` matches `sport` [MQTT-4.7.1-2].
        const multi = node.children.get('#');
        if (multi !== undefined) collect(multi);
      }
      if (depth === levels.length) {
        collect(node);
        return;
      }
      if (wildcardsAllowed) {
        const single = node.children.get('+');
        if (single !== undefined) walk(single, depth + 1);
      }
      const exact = node.children.get(levels[depth]);
      // A topic level literally named `+` or `#` can't exist: topic names have no wildcards.
      if (exact !== undefined) walk(exact, depth + 1);
    };
    walk(this.root, 0);

    const matches: TopicMatches<S, O> = { direct: Object.freeze(direct), groups: Object.freeze(groups), generation: this.changes, memo: undefined };
    if (this.cache.size >= MATCH_CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(topic, matches);
    return matches;
  }

  /** The group of a `$share/<name>/<filter>` subscription (undefined when it has no members). */
  sharedGroup(sharedFilter: string): SharedGroup<S, O> | undefined {
    const shared = parseSharedFilter(sharedFilter);
    if (shared === null) return undefined;
    let node: FilterNode<S, O> | undefined = this.root;
    for (const level of shared.filter.split('/')) {
      node = node.children.get(level);
      if (node === undefined) return undefined;
    }
    return node.groups.get(shared.share);
  }

  private nodeFor(filter: string): FilterNode<S, O> {
    let node = this.root;
    let path = '';
    for (const level of filter.split('/')) {
      path = node === this.root ? level : `${path}/${level}`;
      let child = node.children.get(level);
      if (child === undefined) {
        child = new FilterNode<S, O>(path);
        node.children.set(level, child);
      }
      node = child;
    }
    return node;
  }

  /** Takes the subscriber off the filter's node and prunes the nodes left empty. */
  private detach(subscriber: S, filter: string): void {
    const shared = parseSharedFilter(filter);
    const levels = (shared === null ? filter : shared.filter).split('/');
    const path: FilterNode<S, O>[] = [this.root];
    for (const level of levels) {
      const child = path[path.length - 1].children.get(level);
      if (child === undefined) return;
      path.push(child);
    }
    const node = path[path.length - 1];
    if (shared === null) {
      node.subscribers.delete(subscriber);
    } else {
      const group = node.groups.get(shared.share);
      if (group !== undefined) {
        group.members = Object.freeze(group.members.filter((m) => m.subscriber !== subscriber));
        if (group.members.length === 0) node.groups.delete(shared.share);
        this.groupSizeChanged?.(shared.share, shared.filter, group.members.length);
      }
    }
    for (let i = path.length - 1; i > 0 && path[i].isEmpty(); i--) path[i - 1].children.delete(levels[i - 1]);
  }
}
