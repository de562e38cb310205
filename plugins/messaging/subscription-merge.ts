/**
 * The one rule for several subscriptions of one session matching one message: the session gets
 * ONE delivery, at the highest QoS granted, with the RETAIN flag when any subscription keeps it as
 * published, carrying every matching Subscription Identifier (MQTT 5 §3.3.4, [MQTT-3.3.4-2,
 * MQTT-3.3.4-3]). The router (live messages), the catch-up (from the ring or the log) and the
 * reads of MQ API sessions all merge with it.
 */
import type { SubscriptionOptions } from './session';

/** One session's subscriptions merged for one message. */
export interface MergedDelivery {
  /** At least one subscription takes the message. */
  taken: boolean;
  /** An index of the session in the match's direct subscriptions (its receive decision is kept there). */
  index: number;
  qos: number;
  retain: boolean;
  subscriptionIds: number[] | undefined;
  /** The first subscription that takes it (an MQ API read writes binary values as it asks). */
  first: SubscriptionOptions | undefined;
  /** One of them asks for expired messages too (MQ API sessions). */
  includeExpired: boolean;
}

export function emptyMerge(index: number): MergedDelivery {
  return { taken: false, index, qos: 0, retain: false, subscriptionIds: undefined, first: undefined, includeExpired: false };
}

/** Empties a merge for the next message (a loop over many messages keeps one: nothing allocated per message). */
export function resetMerge(merged: MergedDelivery, index: number): MergedDelivery {
  merged.taken = false;
  merged.index = index;
  merged.qos = 0;
  merged.retain = false;
  merged.subscriptionIds = undefined;
  merged.first = undefined;
  merged.includeExpired = false;
  return merged;
}

/**
 * Adds one matching subscription of the session `clientId` to the merge, unless it does not take
 * the message: No Local, or (catch-up, reads) made after the message was appended, as
 * `checkedSequence` tells: the message's sequence, or Infinity where every subscription predates
 * it (live routing).
 */
export function mergeSubscription(
  merged: MergedDelivery, options: SubscriptionOptions, clientId: string,
  publisher: string | null, checkedSequence: number, publishedQos: number, publishedRetain: boolean,
): void {
  if (options.noLocal && publisher === clientId) return;
  // Published before this subscription existed (a session resumed or lagging): not for it, as a
  // subscription receives what is published after it is made (MQTT 5 §3.8.4).
  if (options.since !== undefined && checkedSequence <= options.since) return;
  merged.taken = true;
  merged.first ??= options;
  const qos = Math.min(publishedQos, options.qos);
  if (qos > merged.qos) merged.qos = qos;
  merged.retain ||= options.retainAsPublished && publishedRetain;
  merged.includeExpired ||= options.includeExpired === true;
  if (options.subscriptionIdentifier !== undefined) (merged.subscriptionIds ??= []).push(options.subscriptionIdentifier);
}

/** The Subscription Identifiers a delivery through one subscription carries. */
export function idsOf(options: SubscriptionOptions): number[] | undefined {
  return options.subscriptionIdentifier === undefined ? undefined : [options.subscriptionIdentifier];
}
