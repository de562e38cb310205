/**
 * PUBLISH from a client: topic (or topic alias) checks, authorization (the kernel decides, cached
 * per connection), QoS 2 duplicates, then the message core's `publish`: the message is appended
 * to the log in this turn's commit and PUBACK / PUBREC go out only once that commit is durable.
 */
import { isUtf8 } from 'node:buffer';
import type { IPublishPacket } from 'mqtt-packet';
import type { CoreMessage, MessageProperties, QoS } from '../../../kernel/messaging/message';
import { MAX_TOPIC_NAME_BYTES, topicNameFormProblem, topicNameTooLong } from '../../../kernel/topic-name';
import type { Connection } from '../connection';
import { SERVER_TOPIC_ALIAS_MAXIMUM } from '../connection';
import { encodeAck } from '../outbound';
import { publishFailureReason, publishMayBeStored, publishSurelyStored, REASON } from '../reason-codes';
import { userPropertiesInOrder } from '../wire/ordered-user-properties';

/** Publish decisions a connection keeps (cleared when full), for topics up to this length. */
const PUBLISH_DECISIONS_LIMIT = 16_384;
const DECIDED_TOPIC_LENGTH = 1024;

export function handlePublish(connection: Connection, packet: IPublishPacket): void {
  const session = connection.session;
  if (!session) return;
  const v5 = connection.protocolVersion === 5;
  const qos = packet.qos as QoS;
  const packetId = packet.messageId ?? 0;
  const properties = packet.properties;
  let topic = packet.topic;
  /** Recorded once the topic is known valid and allowed (a refused topic pins no memory). */
  let aliasToSet = 0;

  if (v5 && properties) {
    const alias = properties.topicAlias;
    if (alias !== undefined) {
      // [MQTT-3.3.2-8, MQTT-3.3.2-9]: 0 and values above what CONNACK allowed are errors.
      if (alias === 0 || alias > SERVER_TOPIC_ALIAS_MAXIMUM) return connection.close(REASON.TOPIC_ALIAS_INVALID, `topic alias ${alias} is not between 1 and ${SERVER_TOPIC_ALIAS_MAXIMUM}`);
      if (topic.length > 0) aliasToSet = alias;
      else {
        const known = connection.inboundAliases.get(alias);
        if (known === undefined) return connection.close(REASON.PROTOCOL_ERROR, `topic alias ${alias} was never set`);
        topic = known;
      }
    }
    // A client may not send Subscription Identifiers [MQTT-3.3.4-6].
    if (properties.subscriptionIdentifier !== undefined) return connection.close(REASON.PROTOCOL_ERROR, 'a PUBLISH from a client carries no subscription identifier');
  }
  // Topic Name by the one rule (kernel/topic-name.ts): no wildcards [MQTT-3.3.2-2], not empty
  // without an alias [MQTT-3.3.2-1], valid UTF-8 (decoded as mqtt-packet does; a replacement
  // character means bytes that were not UTF-8) [MQTT-1.5.4-1]. A malformed one ends the connection.
  // (A topic with a publish decision was checked before.)
  const kept = keptDecision(connection, topic);
  if (kept === undefined) {
    const problem = topic.includes('\uFFFD') ? 'a topic name must be valid UTF-8' : topicNameFormProblem(topic);
    if (problem) return connection.close(topic.length === 0 ? REASON.PROTOCOL_ERROR : REASON.TOPIC_NAME_INVALID, problem);
    // Well formed but longer than the store takes: this message alone is refused.
    if (topicNameTooLong(topic)) return refuseLongTopic(connection, qos, packetId);
  }

  if (qos > 0) {
    // The same QoS 2 message again while it is being stored: its PUBREC is on its way.
    if (qos === 2 && connection.qos2Storing.has(packetId)) return;
    if (qos === 2 && connection.broker.core.hasReceivedQos2(session, packetId)) {
      // Already stored: acknowledged again, not published again [MQTT-4.3.3-10].
      connection.writeAnswerInOrder(encodeAck('pubrec', packetId, connection.protocolVersion));
      return;
    }
  }
  const core = connection.broker.core;
  core.countPublished(session, topic, connection.broker.now, qos);

  if (!(kept ?? decidePublish(connection, topic))) {
    connection.broker.log.debug({ clientId: connection.clientId, topic }, 'PUBLISH not authorized');
    // MQTT 5 says why [MQTT-3.4.2-1]; a 3.1.1 client cannot be told and is acknowledged (as Mosquitto does).
    if (qos > 0) connection.writeAnswerInOrder(encodeAck(qos === 1 ? 'puback' : 'pubrec', packetId, connection.protocolVersion, REASON.NOT_AUTHORIZED));
    return;
  }
  if (v5 && properties?.payloadFormatIndicator === true && !isUtf8(packet.payload as Buffer)) {
    // The payload says UTF-8 and is not [MQTT-3.3.2-4]: refused with 0x99.
    if (qos > 0) connection.writeAnswerInOrder(encodeAck(qos === 1 ? 'puback' : 'pubrec', packetId, 5, REASON.PAYLOAD_FORMAT_INVALID));
    return;
  }

  if (aliasToSet !== 0 && !setInboundAlias(connection, aliasToSet, topic)) return;

  const message: CoreMessage = {
    topic,
    payload: typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload,
    qos,
    retain: packet.retain,
    properties: v5 && properties ? messageProperties(properties) : undefined,
    publisher: connection.clientId ?? null,
    createdAt: connection.broker.now,
    sequence: 0,
    // Complete at creation: the delivery's encoding cache (outbound.ts) adds no property.
    wire: undefined,
    wireForm: 0,
  };
  if (qos > 0) {
    connection.unacknowledged++;
    if (qos === 2) {
      // Written with the message's commit: a restart still knows it was received [MQTT-4.3.3-10].
      connection.qos2Storing.add(packetId);
      connection.qos2AwaitingRelease.add(packetId);
      core.receivedQos2(session, packetId);
    }
  }
  // Paused by the core while the log's backlog is high: this publisher waits until it drains.
  core.publish(message, connection, packetId * 4 + qos);
}

/**
 * A topic longer than MAX_TOPIC_NAME_BYTES is well formed MQTT the server does not accept: MQTT 5
 * is told with PUBACK/PUBREC 0x90 Topic Name invalid and goes on (a QoS 0 message is dropped, as
 * an unauthorized one is); a 3.1.1 client cannot be told, and is disconnected rather than
 * acknowledged for a message that is not stored.
 */
function refuseLongTopic(connection: Connection, qos: QoS, packetId: number): void {
  const reason = `a topic name must not exceed ${MAX_TOPIC_NAME_BYTES.toLocaleString('en-US')} bytes`;
  if (connection.protocolVersion !== 5) return connection.close(REASON.TOPIC_NAME_INVALID, reason);
  connection.broker.log.debug({ clientId: connection.clientId }, 'PUBLISH refused: topic name too long');
  if (qos > 0) connection.writeAnswerInOrder(encodeAck(qos === 1 ? 'puback' : 'pubrec', packetId, 5, REASON.TOPIC_NAME_INVALID));
}

/** The message is durable (or its commit failed): PUBACK or PUBREC now [MQTT-4.3.2-2]. */
export function publishStored(connection: Connection, token: number, ok: boolean, _message: CoreMessage, error?: unknown): void {
  const qos = token & 3;
  if (qos === 0) return;
  const packetId = token >> 2;
  connection.unacknowledged--;
  if (qos === 2) connection.qos2Storing.delete(packetId);
  // Not stored: the client's resend (also after a reconnect) must be stored, not acknowledged.
  if (!ok && qos === 2 && !publishSurelyStored(error)) {
    if (connection.session) connection.broker.core.releasedQos2(connection.session, packetId);
    connection.released(packetId);
  }
  if (connection.state !== 'connected') return;
  if (!ok) {
    // MQTT 5 hears the failure; a 3.1.1 client can only be disconnected (it will send again), and
    // so is any client whose message may be stored all the same (a cluster's unknown outcome).
    if (publishMayBeStored(error)) {
      connection.close(REASON.UNSPECIFIED_ERROR, error instanceof Error ? error.message : undefined);
    } else if (connection.protocolVersion === 5) {
      connection.writeAnswer(encodeAck(qos === 1 ? 'puback' : 'pubrec', packetId, 5, publishFailureReason(error)));
      connection.storedAnswered();
    } else {
      connection.close();
    }
    return;
  }
  if (qos === 1) connection.writePuback(packetId);
  else connection.writeAnswer(encodeAck('pubrec', packetId, connection.protocolVersion));
  connection.storedAnswered();
}

/** Topic bytes one connection's inbound aliases may hold; beyond, DISCONNECT 0x97 quota exceeded. */
const INBOUND_ALIAS_BYTES = 1 << 20;

function setInboundAlias(connection: Connection, alias: number, topic: string): boolean {
  const aliases = connection.inboundAliases;
  const previous = aliases.get(alias);
  connection.inboundAliasBytes += topic.length - (previous?.length ?? 0);
  if (connection.inboundAliasBytes > INBOUND_ALIAS_BYTES) {
    connection.close(REASON.QUOTA_EXCEEDED, 'the topic aliases of this connection hold too many bytes');
    return false;
  }
  aliases.set(alias, topic);
  return true;
}

/** The connection's publish decision for the topic, if it keeps one (none once roles changed). */
function keptDecision(connection: Connection, topic: string): boolean | undefined {
  const generation = connection.broker.core.authorizationGeneration;
  const decisions = connection.publishDecisions;
  if (connection.publishDecisionsGeneration !== generation) {
    decisions.clear();
    connection.publishDecisionsGeneration = generation;
  }
  return decisions.get(topic);
}

/** The kernel's decision (`mq.publish` on the topic), kept by the connection. */
function decidePublish(connection: Connection, topic: string): boolean {
  const allowed = connection.broker.core.mayPublish(connection.principal!, topic);
  const decisions = connection.publishDecisions;
  if (decisions.size >= PUBLISH_DECISIONS_LIMIT) decisions.clear();
  // Long topics are decided each time rather than kept.
  if (topic.length <= DECIDED_TOPIC_LENGTH) decisions.set(topic, allowed);
  return allowed;
}

/** The properties a message keeps (topic alias and the like belong to one hop). */
export function messageProperties(p: NonNullable<IPublishPacket['properties']>): MessageProperties | undefined {
  const out: MessageProperties = {};
  let any = false;
  if (p.payloadFormatIndicator !== undefined) { out.payloadFormatIndicator = p.payloadFormatIndicator; any = true; }
  if (p.messageExpiryInterval !== undefined) { out.messageExpiryInterval = p.messageExpiryInterval; any = true; }
  if (p.contentType !== undefined) { out.contentType = p.contentType; any = true; }
  if (p.responseTopic !== undefined) { out.responseTopic = p.responseTopic; any = true; }
  if (p.correlationData !== undefined) { out.correlationData = p.correlationData; any = true; }
  // In their order, repeated names included [MQTT-3.3.2-17, MQTT-3.3.2-18].
  const userProperties = userPropertiesInOrder(p);
  if (userProperties !== undefined) { out.userProperties = userProperties; any = true; }
  return any ? out : undefined;
}
