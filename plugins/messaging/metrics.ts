/**
 * The message core's figures for the metrics (kernel/metrics.ts): counters it keeps anyway
 * (`stats`, the subscription tree's and retained store's sizes), read at scrape time only.
 */
import type { MetricsRegistry } from '../../kernel/metrics';
import type { MessageCore } from './message-core';

const byQos = (counts: readonly number[]) => counts.map((value, qos) => ({ labels: { qos: String(qos) }, value }));

export function addMessagingMetrics(metrics: MetricsRegistry, core: MessageCore): void {
  const { stats } = core;
  metrics.add({ name: 'engine_messages_received_total', help: 'Messages MQTT clients published, by QoS (counted as received, before authorization)', kind: 'counter', labelNames: ['qos'], read: () => byQos(stats.receivedByQos) });
  metrics.add({ name: 'engine_messages_sent_total', help: 'Messages delivered to subscribers (resends included), by QoS of the delivery', kind: 'counter', labelNames: ['qos'], read: () => byQos(stats.sentByQos) });
  metrics.add({ name: 'engine_messages_stored_total', help: 'Messages appended to the message log (MQTT, actions, REST inserts into integration tables), by QoS', kind: 'counter', labelNames: ['qos'], read: () => byQos(stats.storedByQos) });
  metrics.add({ name: 'engine_messages_dropped_total', help: 'Published messages whose commit failed (the publisher was told)', kind: 'counter', read: () => stats.publishDropped });
  metrics.add({ name: 'engine_mqtt_received_bytes_total', help: 'Bytes received from MQTT clients', kind: 'counter', read: () => stats.bytesReceived });
  metrics.add({ name: 'engine_mqtt_sent_bytes_total', help: 'Bytes sent to MQTT clients', kind: 'counter', read: () => stats.bytesSent });
  metrics.add({
    name: 'engine_sessions',
    help: 'Message sessions (MQTT clients and MQ API sessions), by whether a connection holds them',
    kind: 'gauge',
    labelNames: ['state'],
    read: () => {
      const { connected, total } = core.sessionCounts();
      return [{ labels: { state: 'connected' }, value: connected }, { labels: { state: 'disconnected' }, value: total - connected }];
    },
  });
  metrics.add({ name: 'engine_subscriptions', help: 'Subscriptions of every session (shared ones included)', kind: 'gauge', read: () => core.tree.size });
  metrics.add({ name: 'engine_retained_messages', help: 'Retained messages', kind: 'gauge', read: () => core.retained.size });
  metrics.add({ name: 'engine_topics', help: 'Topics the message log holds', kind: 'gauge', read: () => core.messageLog.topicCount() });
}
