/**
 * A message as the message core carries it: protocol neutral (the MQTT 5 properties are the
 * richest shape any protocol gives a message). Protocols build and receive these through the
 * message core's port (message-core-port.ts).
 */
export type QoS = 0 | 1 | 2;

/** One MQTT 5 User Property: a name (`key`) and a value. */
export interface UserProperty {
  key: string;
  value: string;
}

/**
 * User properties in the order they were published, repeated names included: they are forwarded
 * so [MQTT-3.3.2-17, MQTT-3.3.2-18]. The log stores the same shape.
 */
export type UserProperties = UserProperty[];

export interface MessageProperties {
  payloadFormatIndicator?: boolean;
  /** Seconds the message lives after it was published (MQTT 5 Message Expiry Interval). */
  messageExpiryInterval?: number;
  contentType?: string;
  responseTopic?: string;
  correlationData?: Buffer;
  userProperties?: UserProperties;
}

export interface CoreMessage {
  topic: string;
  /** The exact bytes published: subscribers receive these. */
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  properties?: MessageProperties;
  /** Client name of the publisher (null: published by the server itself). */
  publisher: string | null;
  /** Engine clock, ms, when the core took the message. */
  createdAt: number;
  /** Its message id in the log, set once stored (0: not stored, e.g. `$SYS`). */
  sequence: number;
  /**
   * Encodings cached by the protocol plugins, so a message is encoded once per form: the first
   * form's bytes alone (its form in `wireForm`), an array by form once there are several. Set
   * `wire: undefined, wireForm: 0` where a message is made, so caching adds no property.
   */
  wire?: Buffer | Array<Buffer | undefined>;
  wireForm?: number;
}

/** Seconds left before the message expires (undefined: it never does; ≤ 0: it has). */
export function remainingLifetime(message: CoreMessage, now: number): number | undefined {
  const interval = message.properties?.messageExpiryInterval;
  if (interval === undefined) return undefined;
  return interval - Math.floor((now - message.createdAt) / 1000);
}
