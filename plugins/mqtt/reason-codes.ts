/**
 * The one place an EngineError (or a protocol failure) becomes an MQTT return / reason code:
 * CONNACK return codes of 3.1.1 (section 3.2.2.3), its SUBACK failure code (section 3.9.3) and
 * reason codes of MQTT 5 (section 2.4). The broker writes no code that is not named here.
 */
import { isEngineError, type EngineError } from '../../kernel/errors';

/** MQTT 5 reason codes the broker sends (OASIS MQTT 5.0, table 2-6). */
export const REASON = {
  SUCCESS: 0x00,
  GRANTED_QOS_1: 0x01,
  GRANTED_QOS_2: 0x02,
  DISCONNECT_WITH_WILL: 0x04,
  NO_MATCHING_SUBSCRIBERS: 0x10,
  NO_SUBSCRIPTION_EXISTED: 0x11,
  UNSPECIFIED_ERROR: 0x80,
  MALFORMED_PACKET: 0x81,
  PROTOCOL_ERROR: 0x82,
  IMPLEMENTATION_SPECIFIC_ERROR: 0x83,
  UNSUPPORTED_PROTOCOL_VERSION: 0x84,
  CLIENT_IDENTIFIER_NOT_VALID: 0x85,
  BAD_USER_NAME_OR_PASSWORD: 0x86,
  NOT_AUTHORIZED: 0x87,
  SERVER_UNAVAILABLE: 0x88,
  BAD_AUTHENTICATION_METHOD: 0x8c,
  SERVER_SHUTTING_DOWN: 0x8b,
  KEEP_ALIVE_TIMEOUT: 0x8d,
  SESSION_TAKEN_OVER: 0x8e,
  ADMINISTRATIVE_ACTION: 0x98,
  TOPIC_FILTER_INVALID: 0x8f,
  TOPIC_NAME_INVALID: 0x90,
  PACKET_IDENTIFIER_IN_USE: 0x91,
  PACKET_IDENTIFIER_NOT_FOUND: 0x92,
  RECEIVE_MAXIMUM_EXCEEDED: 0x93,
  TOPIC_ALIAS_INVALID: 0x94,
  PACKET_TOO_LARGE: 0x95,
  QUOTA_EXCEEDED: 0x97,
  PAYLOAD_FORMAT_INVALID: 0x99,
  RETAIN_NOT_SUPPORTED: 0x9a,
  QOS_NOT_SUPPORTED: 0x9b,
  USE_ANOTHER_SERVER: 0x9c,
  SHARED_SUBSCRIPTIONS_NOT_SUPPORTED: 0x9e,
  SUBSCRIPTION_IDENTIFIERS_NOT_SUPPORTED: 0xa1,
  WILDCARD_SUBSCRIPTIONS_NOT_SUPPORTED: 0xa2,
  CONNECTION_RATE_EXCEEDED: 0x9f,
} as const;

/** Reason codes from 0x80 on are failures (MQTT 5 §2.4). */
export function isFailure(reasonCode: number): boolean {
  return reasonCode >= REASON.UNSPECIFIED_ERROR;
}

/** The MQTT 3.1.1 SUBACK return code of a refused subscription (section 3.9.3). */
export const SUBACK_311_FAILURE = 0x80;

/** MQTT 3.1.1 CONNACK return codes (section 3.2.2.3). */
export const RETURN_CODE_311 = {
  ACCEPTED: 0x00,
  UNACCEPTABLE_PROTOCOL_VERSION: 0x01,
  IDENTIFIER_REJECTED: 0x02,
  SERVER_UNAVAILABLE: 0x03,
  BAD_USER_NAME_OR_PASSWORD: 0x04,
  NOT_AUTHORIZED: 0x05,
} as const;

export interface ConnackRefusal {
  /** The code for the client's protocol level (3.1.1 return code or MQTT 5 reason code). */
  code: number;
  /** MQTT 5 Reason String (never sent to 3.1.1 clients). */
  reasonString?: string;
}

/**
 * The CONNACK refusal for an error raised while logging a client in.
 * - BAD_CREDENTIALS: 3.1.1 0x04, MQTT 5 0x86.
 * - NOT_AUTHORIZED (the client id or the anonymous role): 3.1.1 0x05, MQTT 5 0x87.
 * - BAD_CERTIFICATE (a client certificate refused, or none where one is required): 3.1.1 0x05,
 *   MQTT 5 0x87 (0x86 would tell the client to fix a user name or password it may not have sent).
 * - TOO_MANY_FAILED_LOGINS (login backoff, 12034): MQTT 5 0x9F "Connection rate exceeded", the
 *   code for a temporary refusal (0x8A "Banned" says the client should not come back, 0x86
 *   would say the password is wrong when it was never checked); 3.1.1 0x03 "Server
 *   unavailable", its only temporary code. The MQTT 5 reason string says when to retry.
 * - NOT_AVAILABLE, and CLUSTER_UNAVAILABLE (a new persistent session the cluster could not store,
 *   docs/cluster.md): 3.1.1 0x03, MQTT 5 0x88 Server unavailable.
 * - anything else: 3.1.1 0x03, MQTT 5 0x80 (the detail stays in the server log).
 */
export function connackRefusal(error: EngineError, protocolVersion: number): ConnackRefusal {
  const v5 = protocolVersion === 5;
  switch (error.id) {
    case 'BAD_CREDENTIALS':
      return { code: v5 ? REASON.BAD_USER_NAME_OR_PASSWORD : RETURN_CODE_311.BAD_USER_NAME_OR_PASSWORD, reasonString: error.message };
    case 'NOT_AUTHORIZED':
    case 'BAD_CERTIFICATE':
      return { code: v5 ? REASON.NOT_AUTHORIZED : RETURN_CODE_311.NOT_AUTHORIZED, reasonString: error.message };
    case 'TOO_MANY_FAILED_LOGINS':
      return { code: v5 ? REASON.CONNECTION_RATE_EXCEEDED : RETURN_CODE_311.SERVER_UNAVAILABLE, reasonString: error.message };
    case 'NOT_AVAILABLE':
    case 'CLUSTER_UNAVAILABLE':
      return { code: v5 ? REASON.SERVER_UNAVAILABLE : RETURN_CODE_311.SERVER_UNAVAILABLE, reasonString: error.message };
    default:
      return { code: v5 ? REASON.UNSPECIFIED_ERROR : RETURN_CODE_311.SERVER_UNAVAILABLE, reasonString: error.message };
  }
}

/**
 * The MQTT 5 PUBACK / PUBREC reason code of a PUBLISH that was not stored.
 * - STORAGE_FULL (a full disk or LMDB map, 12050): 0x97 Quota exceeded, a temporary refusal the
 *   client may retry later (a 3.1.1 publisher is disconnected instead, and sends again).
 * - anything else: 0x80 Unspecified error (the detail stays in the server log).
 */
export function publishFailureReason(error: unknown): number {
  if (isEngineError(error) && error.id === 'STORAGE_FULL') return REASON.QUOTA_EXCEEDED;
  return REASON.UNSPECIFIED_ERROR;
}

/**
 * Whether a PUBLISH that was not confirmed may be stored all the same: a cluster write whose
 * outcome is unknown or that the stream holds but this node did not apply in time
 * (CLUSTER_UNAVAILABLE, `stored` not 'no'; docs/cluster.md). Its publisher is then disconnected
 * (MQTT 5: DISCONNECT 0x80 with the reason), never told it failed: it sends again (DUP) once
 * connected, rather than give up on a message subscribers may get.
 */
export function publishMayBeStored(error: unknown): boolean {
  return isEngineError(error) && error.id === 'CLUSTER_UNAVAILABLE' && error.details.stored !== 'no';
}

/** A PUBLISH the cluster surely stored, though not confirmed in time: a QoS 2 resend is not stored again. */
export function publishSurelyStored(error: unknown): boolean {
  return isEngineError(error) && error.id === 'CLUSTER_UNAVAILABLE' && error.details.stored === 'yes';
}
