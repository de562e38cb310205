/**
 * The message core's authorization decisions on topics: publish, subscribe and receive, each the
 * kernel's decision (engine.allows), cached where a message would otherwise ask it again. The
 * generation is bumped when roles change, a session resumes under other roles, or a topic gains
 * or loses an integration table name: every cached decision is void then.
 */
import type { Engine } from '../../kernel/engine';
import type { Principal } from '../../kernel/auth/principal';
import { PUBLISH_COMMAND, SUBSCRIBE_COMMAND } from '../../kernel/messaging/session-types';
import type { SubscriptionOptions } from './session';
import type { Session } from './session';
import { type TopicMatches } from './subscription-tree';
import { parseSharedFilter } from '../../kernel/auth/topic-filter';

/** Decisions a session keeps about topics it may receive (cleared when full). */
const RECEIVE_DECISIONS_LIMIT = 16_384;

export type Matches = TopicMatches<Session, SubscriptionOptions>;

/** A match's receive decisions (`mayReceiveThrough`), by index of its direct subscriptions. */
interface ReceiveDecisions {
  generation: number;
  allowed: Array<boolean | undefined>;
}

export class TopicDecisions {
  /** See the file comment. */
  generation = 0;

  constructor(private readonly engine: Engine) {
    engine.roles.onChange(() => { this.generation++; });
  }

  /** May the principal publish to the topic? (the kernel decides; callers cache per connection) */
  mayPublish(principal: Principal, topic: string): boolean {
    return this.allowed(principal, PUBLISH_COMMAND, topic);
  }

  /**
   * May a connection's will be published to the topic, for its account as it is now? A will is
   * sent after its connection ended, perhaps closed because its account was deleted or its roles
   * revoked (docs/roles.md): the principal of its login is stale then. A deleted account
   * publishes nothing; the anonymous identity is not an account and is decided as it is.
   */
  mayPublishWill(principal: Principal, topic: string): boolean {
    const accounts = this.engine.accounts;
    // Account names have no '$' ($anonymous, $system are not accounts).
    if (principal.account.startsWith('$')) return this.mayPublish(principal, topic);
    return accounts.has(principal.account) && this.mayPublish(accounts.principal(principal.account), topic);
  }

  /** May the principal subscribe to the filter (the filter part of a shared one)? */
  maySubscribe(principal: Principal, filter: string): boolean {
    return this.allowed(principal, SUBSCRIBE_COMMAND, parseSharedFilter(filter)?.filter ?? filter);
  }

  /** May the principal run `command` on the topic (the kernel's decision, as a boolean)? */
  allowed(principal: Principal, command: string, topic: string): boolean {
    return this.engine.allows({ principal, origin: 'mq' }, command, { kind: 'topic', topic });
  }

  /**
   * Whether the session may receive a message of this topic (`mq.subscribe` on it), decided once
   * per topic and generation: a wildcard subscription covering denied topics is granted and
   * their messages are withheld here, and a role changed after a subscription applies at once.
   */
  mayReceive(session: Session, topic: string): boolean {
    if (session.receiveDecisionsGeneration !== this.generation) {
      session.receiveDecisions.clear();
      session.receiveDecisionsGeneration = this.generation;
    }
    let allowed = session.receiveDecisions.get(topic);
    if (allowed === undefined) {
      allowed = this.allowed(session.principal, SUBSCRIBE_COMMAND, topic);
      if (session.receiveDecisions.size >= RECEIVE_DECISIONS_LIMIT) session.receiveDecisions.clear();
      if (topic.length <= 1024) session.receiveDecisions.set(topic, allowed);
    }
    return allowed;
  }

  /**
   * `mayReceive` for the subscriber of `matches.direct[index]`, kept on the match itself (the
   * router and the catch-up hold it already): no lookup by topic per message.
   */
  mayReceiveThrough(matches: Matches, index: number, topic: string): boolean {
    let memo = matches.memo as ReceiveDecisions | undefined;
    if (memo === undefined || memo.generation !== this.generation) {
      memo = { generation: this.generation, allowed: new Array<boolean | undefined>(matches.direct.length) };
      matches.memo = memo;
    }
    let allowed = memo.allowed[index];
    if (allowed === undefined) memo.allowed[index] = allowed = this.allowed(matches.direct[index].subscriber.principal, SUBSCRIBE_COMMAND, topic);
    return allowed;
  }
}
