/**
 * Retained messages in memory: topic name → the caller's small entry (at least the log sequence of
 * the retained message). Pure: the core persists `retained/<topic>` in the log's state store itself.
 *
 * Topics live in a trie of levels so `match(filter)` visits only the branches the filter can reach
 * (a SUBSCRIBE with `sport/tennis/+` doesn't scan 100,000 topics); `get` uses a flat map.
 */
import { lowerBound } from '../../lib/sorted';

export interface RetainedEntry {
  readonly sequence: number;
}

class TopicNode<E> {
  readonly children = new Map<string, TopicNode<E>>();
  /** The topic name ending at this node, when one is retained here. */
  topic: string | undefined;
  entry: E | undefined;
}

export class RetainedStore<E extends RetainedEntry> {
  private readonly root = new TopicNode<E>();
  private readonly byTopic = new Map<string, E>();
  /** Every topic in sort order, rebuilt lazily for `list` after topics come or go. */
  private sortedTopics: string[] | null = null;

  get size(): number {
    return this.byTopic.size;
  }

  get(topic: string): E | undefined {
    return this.byTopic.get(topic);
  }

  /** Retains (or replaces) the entry of a topic name. */
  set(topic: string, entry: E): void {
    if (!this.byTopic.has(topic)) this.sortedTopics = null;
    this.byTopic.set(topic, entry);
    let node = this.root;
    for (const level of topic.split('/')) {
      let child = node.children.get(level);
      if (child === undefined) {
        child = new TopicNode<E>();
        node.children.set(level, child);
      }
      node = child;
    }
    node.topic = topic;
    node.entry = entry;
  }

  /** Forgets a topic's retained entry (an empty retained payload clears it [MQTT-3.3.1-6]); false when none. */
  delete(topic: string): boolean {
    if (!this.byTopic.delete(topic)) return false;
    this.sortedTopics = null;
    const levels = topic.split('/');
    const path: TopicNode<E>[] = [this.root];
    for (const level of levels) {
      const child = path[path.length - 1].children.get(level);
      if (child === undefined) return true;
      path.push(child);
    }
    const node = path[path.length - 1];
    node.topic = undefined;
    node.entry = undefined;
    for (let i = path.length - 1; i > 0 && path[i].children.size === 0 && path[i].topic === undefined; i--) {
      path[i - 1].children.delete(levels[i - 1]);
    }
    return true;
  }

  /**
   * Every retained topic matching a (valid, non-shared) topic filter, in no particular order.
   * `sport/#` includes `sport`; leading `+`/`#` skip topics starting with `$` [MQTT-4.7.2-1].
   */
  *match(filter: string): Generator<[string, E]> {
    yield* this.walk(this.root, filter.split('/'), 0);
  }

  /**
   * Retained topics in code-unit order for paging: all of them, those starting with a prefix
   * (an argument without wildcards) or those matching a filter (an argument with `+` or `#`,
   * which no topic name has), after the topic `after` (exclusive), at most `limit`.
   */
  list(prefixOrFilter?: string, limit = Infinity, after?: string): [string, E][] {
    const result: [string, E][] = [];
    if (limit <= 0) return result;
    if (prefixOrFilter !== undefined && /[+#]/.test(prefixOrFilter)) {
      const topics = [...this.match(prefixOrFilter)].filter(([topic]) => after === undefined || topic > after);
      topics.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return topics.slice(0, limit);
    }
    const prefix = prefixOrFilter ?? '';
    const sorted = this.sorted();
    let index = lowerBound(sorted, prefix, asIs);
    if (after !== undefined && after >= prefix) {
      index = lowerBound(sorted, after, asIs);
      if (sorted[index] === after) index++;
    }
    for (; index < sorted.length && result.length < limit; index++) {
      const topic = sorted[index];
      if (!topic.startsWith(prefix)) break;
      result.push([topic, this.byTopic.get(topic) as E]);
    }
    return result;
  }

  private *walk(node: TopicNode<E>, levels: string[], depth: number): Generator<[string, E]> {
    if (depth === levels.length) {
      if (node.topic !== undefined) yield [node.topic, node.entry as E];
      return;
    }
    const level = levels[depth];
    const skipDollar = depth === 0;
    if (level === '#') {
      // `#` matches the parent level too [MQTT-4.7.1-2].
      if (node.topic !== undefined) yield [node.topic, node.entry as E];
      for (const [name, child] of node.children) {
        if (skipDollar && name.startsWith('$')) continue;
        yield* this.everything(child);
      }
    } else if (level === '+') {
      for (const [name, child] of node.children) {
        if (skipDollar && name.startsWith('$')) continue;
        yield* this.walk(child, levels, depth + 1);
      }
    } else {
      const child = node.children.get(level);
      if (child !== undefined) yield* this.walk(child, levels, depth + 1);
    }
  }

  /** Every topic at or under a node; iterative, as `#` may cover deep trees. */
  private *everything(start: TopicNode<E>): Generator<[string, E]> {
    const stack = [start];
    while (stack.length > 0) {
      const node = stack.pop() as TopicNode<E>;
      if (node.topic !== undefined) yield [node.topic, node.entry as E];
      for (const child of node.children.values()) stack.push(child);
    }
  }

  private sorted(): string[] {
    if (this.sortedTopics === null) this.sortedTopics = [...this.byTopic.keys()].sort();
    return this.sortedTopics;
  }
}

const asIs = (topic: string): string => topic;
