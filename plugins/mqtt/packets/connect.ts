/**
 * CONNECT, MQTT 3.1.1 (level 4) and 5: protocol level, credentials through the kernel's login
 * guard (`engine.logins`, so the failed-login backoff applies), anonymous clients only when
 * `mqtt_allow_anonymous`, the client identifier (assigned when empty, authorized as
 * `mq.connect` on `client:<id>`, and `mq.takeover` when its session, connected or not, belongs to
 * another account), takeover of an identifier in use, keep alive, CONNACK.
 */
import { randomBytes } from 'node:crypto';
import type { IConnackPacket, IConnectPacket } from 'mqtt-packet';
import { EngineError, toEngineError } from '../../../kernel/errors';
import type { Principal } from '../../../kernel/auth/principal';
import type { Connection } from '../connection';
import { REASON, RETURN_CODE_311, connackRefusal, type ConnackRefusal } from '../reason-codes';
import { CONNECT_COMMAND, SESSION_NEVER_EXPIRES, type WillMessage } from '../../../kernel/messaging/session-types';
import type { SessionHandle } from '../../../kernel/messaging/message-core-port';
import { fencedError } from '../../../kernel/messaging/session-ownership';
import type { QoS } from '../../../kernel/messaging/message';
import { topicNameProblem } from '../../../kernel/topic-name';
import { SERVER_TOPIC_ALIAS_MAXIMUM } from '../connection';
import { messageProperties } from './publish';
import { peerSocketOf } from '../transports/peer-socket';


/**
 * Handles a CONNECT. Synchronous when no password is to be checked (anonymous clients, session
 * tokens): no promise, no pause of the socket, no objects kept across turns per CONNECT; a
 * password check returns the promise of its end.
 */
export function handleConnect(connection: Connection, packet: IConnectPacket): void | Promise<void> {
  const { engine } = connection.broker;
  const settings = engine.settings;
  const level = packet.protocolVersion ?? 4;
  if (level !== 4 && level !== 5) {
    // 3.1 (MQIsdp, level 3) and unknown levels: 0x01 in the 3.1.1 encoding [MQTT-3.1.2-2].
    connection.protocolVersion = 4;
    return refuse(connection, { code: RETURN_CODE_311.UNACCEPTABLE_PROTOCOL_VERSION });
  }
  connection.protocolVersion = level;
  const v5 = level === 5;
  const properties = packet.properties;
  if (v5 && properties) {
    if (properties.maximumPacketSize) connection.clientMaxPacketSize = properties.maximumPacketSize;
    if (properties.sessionExpiryInterval) connection.sessionExpiryInterval = properties.sessionExpiryInterval;
    if (properties.receiveMaximum) connection.receiveMaximum = properties.receiveMaximum;
    if (properties.topicAliasMaximum) connection.clientTopicAliasMaximum = properties.topicAliasMaximum;
  }

  // The will topic is a topic name like any other [MQTT-3.1.3-11]: no wildcards.
  const will = packet.will;
  if (will) {
    const problem = will.topic.includes('\uFFFD') ? 'the will topic must be valid UTF-8' : topicNameProblem(will.topic);
    if (problem) {
      if (!v5) return connection.close();
      return refuse(connection, { code: REASON.TOPIC_NAME_INVALID, reasonString: problem });
    }
  }

  // Enhanced authentication (MQTT 5 AUTH) is not offered [MQTT-4.12.0-1].
  if (v5 && properties?.authenticationMethod !== undefined) {
    return refuse(connection, { code: REASON.BAD_AUTHENTICATION_METHOD, reasonString: `authentication method "${properties.authenticationMethod}" is not supported` });
  }

  // Keep alive. mqtt_max_keepalive (0 = no cap) is sent to MQTT 5 clients as Server Keep Alive,
  // also to one asking 0, and they are held to it [MQTT-3.2.2-21]. A 3.1.1 client cannot be told
  // another value, so, as Mosquitto does, one asking more than the cap (or 0) is refused with
  // 0x02 rather than being closed for a silence it was allowed.
  const maxKeepAlive = settings.mqtt_max_keepalive;
  const asked = packet.keepalive ?? 0;
  let keepAlive = asked;
  if (maxKeepAlive > 0 && (asked === 0 || asked > maxKeepAlive)) {
    if (!v5) return refuse(connection, { code: RETURN_CODE_311.IDENTIFIER_REJECTED });
    keepAlive = maxKeepAlive;
  }

  // Client identifier: an empty one is assigned, except for a 3.1.1 client that wants its session
  // kept (it could never find it again) [MQTT-3.1.3-7, MQTT-3.1.3-8].
  let clientId = packet.clientId;
  let assigned: string | undefined;
  if (clientId === '') {
    if (!v5 && !packet.clean) return refuse(connection, { code: RETURN_CODE_311.IDENTIFIER_REJECTED });
    clientId = assigned = `auto-${randomBytes(12).toString('hex')}`;
  }

  let principal: Principal | Promise<Principal>;
  try {
    principal = logIn(connection, packet, clientId);
  } catch (error) {
    return refused(connection, error, clientId, level);
  }
  if (principal instanceof Promise) {
    return principal.then(
      (loggedIn) => admit(connection, packet, loggedIn, clientId, keepAlive, assigned),
      (error: unknown) => refused(connection, error, clientId, level),
    );
  }
  return admit(connection, packet, principal, clientId, keepAlive, assigned);
}

/** The CONNECT of a logged-in client: authorized, then (in a cluster, once its client id is claimed) attached. */
function admit(connection: Connection, packet: IConnectPacket, principal: Principal, clientId: string, keepAlive: number, assigned: string | undefined): void | Promise<void> {
  const level = connection.protocolVersion;
  const core = connection.broker.core;
  try {
    // A session another account owns, connected or not, needs mq.takeover too (docs/mqtt.md).
    core.authorizeSession({ principal, origin: 'mqtt', clientId }, clientId);
  } catch (error) {
    return refused(connection, error, clientId, level);
  }
  // The client may have gone while its password was checked.
  if (connection.state !== 'connecting') return;
  if (core.fenced()) return refuse(connection, connackRefusal(fencedError(), level));
  // In a cluster, the client id is claimed for this node first (docs/cluster.md, "Sessions").
  const claiming = core.claimSession(clientId, principal.account);
  if (claiming !== undefined) {
    return claiming.then((owned) => {
      if (connection.state !== 'connecting') return;
      // A later CONNECT on another node claimed it meanwhile: this one is taken over at once.
      if (!owned) return takenOver(connection);
      return attach(connection, packet, principal, clientId, keepAlive, assigned);
    }, (error: unknown) => {
      // While the stream cannot take writes, a session that ends with its connection is served
      // unclaimed (docs/cluster.md, "Quorum loss"); one that is kept needs its claim.
      if (connection.state === 'connecting' && endsWithConnection(connection, packet) && toEngineError(error).id === 'CLUSTER_UNAVAILABLE') {
        return attach(connection, packet, principal, clientId, keepAlive, assigned);
      }
      return refused(connection, error, clientId, level);
    });
  }
  return attach(connection, packet, principal, clientId, keepAlive, assigned);
}

/** A clean start whose session ends with the connection (3.1.1 clean session 1; MQTT 5 expiry 0). */
function endsWithConnection(connection: Connection, packet: IConnectPacket): boolean {
  return packet.clean !== false && (connection.protocolVersion !== 5 || connection.sessionExpiryInterval === 0);
}

/**
 * A CONNECT authorized (and its client id this node's): attached to its session, answered. A
 * promise while the answer waits (the session being stored): the connection reads no further
 * packets until it settles.
 */
function attach(connection: Connection, packet: IConnectPacket, principal: Principal, clientId: string, keepAlive: number, assigned: string | undefined): void | Promise<void> {
  const { engine } = connection.broker;
  const level = connection.protocolVersion;
  const v5 = level === 5;
  const core = connection.broker.core;
  // A fenced node serves no session (docs/cluster.md, "Self-fencing"), also one whose claim was on its way.
  if (core.fenced()) return refuse(connection, connackRefusal(fencedError(), level));
  // An account change while the login was checked or the claim was on its way closed no connection
  // of this one (it was not live yet): it is decided now as a new CONNECT would be (a deleted
  // account or a changed password refused, changed roles authorized again).
  const current = engine.accounts.current(principal);
  if (current === undefined) return refused(connection, new EngineError('BAD_CREDENTIALS'), clientId, level);
  if (current !== principal) {
    try {
      core.authorizeSession({ principal: current, origin: 'mqtt', clientId }, clientId);
    } catch (error) {
      return refused(connection, error, clientId, level);
    }
    principal = current;
  }
  connection.clientId = clientId;
  connection.principal = principal;
  connection.keepAliveMs = keepAlive * 1000;
  // A second connection with this identifier takes over: the first is closed [MQTT-3.1.4-2].
  engine.clientConnections.attach(clientId, connection);

  // The session: 3.1.1 clean session 0 keeps it without end; MQTT 5 keeps it Session Expiry
  // Interval seconds after the connection [MQTT-3.1.2-4 … MQTT-3.1.2-6, MQTT 5 §3.1.2.11.2].
  const expiryInterval = v5 ? connection.sessionExpiryInterval : packet.clean ? 0 : SESSION_NEVER_EXPIRES;
  const { session, present } = core.openSession(clientId, principal, {
    cleanStart: packet.clean !== false, expiryInterval, kind: 'mqtt',
    connection: { address: connection.address, protocolVersion: level, keepAliveSeconds: keepAlive },
  }, connection);
  connection.session = session;
  const will = packet.will;
  if (will) core.setWill(session, willMessage(connection, will, clientId));

  // In a cluster, a new persistent session is stored first: while the stream cannot take writes
  // it is refused with 0x88 / 0x03, never confirmed and then lost (docs/cluster.md).
  const storing = core.storeNewSession(session, present, connection);
  if (storing !== null) {
    return storing.then(
      () => { if (connection.state === 'connecting') confirm(connection, session, present, principal, clientId, keepAlive, assigned); },
      (error: unknown) => refuse(connection, connackRefusal(toEngineError(error), level)),
    );
  }
  confirm(connection, session, present, principal, clientId, keepAlive, assigned);
}

/** CONNACK accepting the connection, then what the session holds. */
function confirm(connection: Connection, session: SessionHandle, present: boolean, principal: Principal, clientId: string, keepAlive: number, assigned: string | undefined): void {
  const { engine, core } = connection.broker;
  const level = connection.protocolVersion;
  const v5 = level === 5;
  // Session Present is 0 when a CONNACK refuses [MQTT-3.2.2-4] and after a clean start [MQTT-3.2.2-2].
  const connack: IConnackPacket = { cmd: 'connack', sessionPresent: present };
  if (v5) {
    const maxKeepAlive = engine.settings.mqtt_max_keepalive;
    connack.reasonCode = REASON.SUCCESS;
    connack.properties = {
      maximumPacketSize: connection.broker.maxPacketSize,
      receiveMaximum: connection.broker.receiveMaximum,
      topicAliasMaximum: SERVER_TOPIC_ALIAS_MAXIMUM,
      ...(maxKeepAlive > 0 ? { serverKeepAlive: keepAlive } : {}),
      ...(assigned !== undefined ? { assignedClientIdentifier: assigned } : {}),
    };
  } else {
    connack.returnCode = RETURN_CODE_311.ACCEPTED;
  }
  connection.state = 'connected';
  connection.lastActivity = engine.clock.now();
  connection.send(connack);
  // Messages in flight and those published while it was away follow the CONNACK.
  core.resume(session);
  const log = connection.broker.log;
  if (log.isLevelEnabled('debug')) log.debug({ clientId, account: principal.account, protocolVersion: level, address: connection.address }, 'MQTT client connected');
}

/**
 * The client id went to a later CONNECT on another node while this one's claim was applied: as
 * if connected and then taken over, MQTT 5 hears CONNACK then DISCONNECT 0x8E; 3.1.1 is closed.
 */
function takenOver(connection: Connection): void {
  if (connection.protocolVersion !== 5) return connection.close();
  connection.send({ cmd: 'connack', sessionPresent: false, reasonCode: REASON.SUCCESS });
  connection.state = 'connected';
  connection.takeOver();
}

/** A CONNECT whose login or authorization failed: CONNACK with the reason. */
function refused(connection: Connection, error: unknown, clientId: string, level: number): void {
  const engineError = toEngineError(error);
  if (engineError.id === 'INTERNAL') connection.broker.log.error({ err: error, reference: engineError.details.reference }, 'CONNECT failed');
  else connection.broker.log.info({ address: connection.address, clientId, error: engineError.errorName }, 'MQTT CONNECT refused');
  refuse(connection, connackRefusal(engineError, level));
}

/** The account of the client certificate, of the CONNECT's user name and password, or the anonymous identity when allowed. */
function logIn(connection: Connection, packet: IConnectPacket, clientId: string): Principal | Promise<Principal> {
  const { engine } = connection.broker;
  // A verified client certificate logs in its account (a user name must name it; the password is
  // not checked); a refused one, or none where one is required, is BAD_CERTIFICATE (CONNACK 0x87 / 0x05).
  if (engine.settings.tls_client_certificates !== 'off') {
    const certified = engine.certificates.authenticate(peerSocketOf(connection.stream), packet.username || undefined);
    if (certified) return certified;
  }
  const anonymous = (packet.username === undefined || packet.username === '') && packet.password === undefined;
  if (anonymous) {
    const role = engine.settings.mqtt_anonymous_role;
    if (!engine.settings.mqtt_allow_anonymous) throw new EngineError('NOT_AUTHORIZED', { account: '$anonymous', command: CONNECT_COMMAND, resource: `client:${clientId}` });
    return anonymousPrincipal(role);
  }
  if (packet.username === undefined) throw new EngineError('BAD_CREDENTIALS');
  // A live JSON-action session token of the same account is accepted as the password, so a page
  // logged in through createSession (the explorer) can use MQTT without keeping the password.
  const password = packet.password === undefined ? '' : packet.password.toString('utf8');
  const apiSession = password === '' ? undefined : engine.apiSessions.findByToken(password);
  if (apiSession && apiSession.account.toLowerCase() === packet.username.toLowerCase()) {
    connection.apiSessionId = apiSession.id;
    return engine.accounts.principal(apiSession.account);
  }
  // A page retrying with the token of a session that ended is refused without counting as a
  // password guess (it would lock the account out for its owner).
  if (connection.broker.endedTokens.has(password)) throw new EngineError('BAD_CREDENTIALS');
  return engine.logins.authenticate({
    username: packet.username,
    password,
    address: connection.address,
  });
}

/** CONNACK with a refusal, then close [MQTT-3.2.2-5]: no session is present [MQTT-3.2.2-4]. */
function refuse(connection: Connection, refusal: ConnackRefusal): void {
  if (connection.state !== 'connecting') return;
  const connack: IConnackPacket = { cmd: 'connack', sessionPresent: false };
  if (connection.protocolVersion === 5) {
    connack.reasonCode = refusal.code;
    if (refusal.reasonString) connack.properties = { reasonString: refusal.reasonString };
  } else {
    connack.returnCode = refusal.code;
  }
  connection.send(connack);
  connection.close();
}

/** The will of a CONNECT as the message it becomes (with its delay, MQTT 5 Will Delay Interval). */
function willMessage(connection: Connection, will: NonNullable<IConnectPacket['will']>, clientId: string): WillMessage {
  const properties = connection.protocolVersion === 5 && will.properties ? will.properties : undefined;
  return {
    delay: properties?.willDelayInterval ?? 0,
    message: {
      topic: will.topic,
      payload: typeof will.payload === 'string' ? Buffer.from(will.payload) : Buffer.from(will.payload ?? []),
      qos: (will.qos ?? 0) as QoS,
      retain: will.retain === true,
      properties: properties ? messageProperties(properties) : undefined,
      publisher: clientId,
      createdAt: 0,
      sequence: 0,
    },
  };
}

/** One principal per anonymous role, shared by every anonymous connection (thousands may be idle). */
const anonymousPrincipals = new Map<string, Principal>();

function anonymousPrincipal(role: string | null): Principal {
  const key = role ?? '';
  let principal = anonymousPrincipals.get(key);
  if (!principal) {
    principal = Object.freeze({ account: '$anonymous', roles: Object.freeze(role ? [role] : []) });
    anonymousPrincipals.set(key, principal);
  }
  return principal;
}
