/**
 * One shared MQTT 5 connection from the page to this server (`/mqtt` over WebSocket), opened only
 * when a screen subscribes (the mqtt module is loaded then, with a dynamic import) and closed a
 * few seconds after the last subscription ends or at log out. The account's action-session token
 * is its MQTT password. Each filter gets its own subscription identifier, so a message matching
 * two filters reaches each filter's listeners once.
 *
 *   const stop = subscribeLive('a/b/#', (message) => ...);   // later: stop()
 */
import { signal, effect } from '@preact/signals';
import { login } from './api.js';

/**
 * This tab's client name: the live tail connects with it, and messages published from the page
 * carry it as their publisher (so a reader of the history sees they came from this console).
 */
export const CONSOLE_CLIENT_NAME = `explorer-${Math.random().toString(36).slice(2, 12)}`;

export interface LiveMessage {
  topic: string;
  payload: Uint8Array;
  qos: number;
  retain: boolean;
  /** MQTT 5 PUBLISH properties as mqtt.js gives them (contentType, responseTopic, correlationData, messageExpiryInterval, userProperties, payloadFormatIndicator). */
  properties: LiveProperties;
  receivedAt: number;
}

export interface LiveProperties {
  contentType?: string;
  responseTopic?: string;
  correlationData?: Uint8Array;
  messageExpiryInterval?: number;
  userProperties?: Record<string, string | string[]>;
  payloadFormatIndicator?: boolean;
  subscriptionIdentifier?: number | number[];
}

export type LiveStatus = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'error';

/** The connection's state, for a status badge. */
export const liveStatus = signal<LiveStatus>('idle');
export const liveError = signal<string>('');
/** The filters the server has acknowledged (SUBACK) on the current connection. */
export const subscribedFilters = signal<ReadonlySet<string>>(new Set());

function markSubscribed(filter: string, on: boolean): void {
  const next = new Set(subscribedFilters.peek());
  if (on) next.add(filter);
  else next.delete(filter);
  subscribedFilters.value = next;
}

type Listener = (message: LiveMessage) => void;

interface Packet {
  qos: number;
  retain: boolean;
  properties?: LiveProperties;
}

interface MqttClient {
  connected: boolean;
  on(event: 'connect', listener: () => void): void;
  on(event: 'reconnect' | 'close' | 'offline', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'message', listener: (topic: string, payload: Uint8Array, packet: Packet) => void): void;
  subscribe(filter: string, options: Record<string, unknown>, callback?: (error: Error | null) => void): void;
  unsubscribe(filter: string, callback?: (error?: Error) => void): void;
  end(force?: boolean): void;
}

interface MqttModule {
  connect(url: string, options: Record<string, unknown>): MqttClient;
}

interface Subscription {
  filter: string;
  identifier: number;
  listeners: Set<Listener>;
}

const CLOSE_DELAY_MS = 5000;

let client: MqttClient | null = null;
let opening: Promise<MqttClient> | null = null;
let closeTimer: ReturnType<typeof setTimeout> | undefined;
let nextIdentifier = 1;
const byFilter = new Map<string, Subscription>();
const byIdentifier = new Map<number, Subscription>();

async function open(): Promise<MqttClient> {
  if (client) return client;
  if (!opening) {
    opening = (async () => {
      const account = login.value;
      if (!account) throw new Error('Not logged in');
      liveStatus.value = 'connecting';
      const imported = await import('mqtt') as unknown as { default?: MqttModule } & MqttModule;
      const mqtt: MqttModule = typeof imported.connect === 'function' ? imported : imported.default!;
      const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/mqtt`;
      const created = mqtt.connect(url, {
        protocolVersion: 5,
        username: account.account,
        password: account.token,
        clientId: CONSOLE_CLIENT_NAME,
        clean: true,
        reconnectPeriod: 3000,
        connectTimeout: 10_000,
        resubscribe: false,
      });
      created.on('connect', () => {
        liveStatus.value = 'connected';
        liveError.value = '';
        subscribedFilters.value = new Set();
        // A reconnect starts a clean session: subscribe everything again.
        for (const subscription of byFilter.values()) subscribeOn(created, subscription);
      });
      created.on('reconnect', () => { liveStatus.value = 'reconnecting'; });
      created.on('offline', () => {
        if (liveStatus.value === 'connected') liveStatus.value = 'reconnecting';
        subscribedFilters.value = new Set();
      });
      created.on('error', (error) => {
        liveStatus.value = 'error';
        liveError.value = error.message;
      });
      created.on('message', (topic, payload, packet) => dispatch(topic, payload, packet));
      client = created;
      return created;
    })();
    opening.catch(() => { opening = null; });
  }
  return opening;
}

function subscribeOn(target: MqttClient, subscription: Subscription): void {
  target.subscribe(subscription.filter, { qos: 0, rh: 0, properties: { subscriptionIdentifier: subscription.identifier } }, (error) => {
    if (error) liveError.value = `${subscription.filter}: ${error.message}`;
    else if (byFilter.get(subscription.filter) === subscription) markSubscribed(subscription.filter, true);
  });
}

function dispatch(topic: string, payload: Uint8Array, packet: Packet): void {
  const message: LiveMessage = { topic, payload, qos: packet.qos, retain: packet.retain, properties: packet.properties ?? {}, receivedAt: Date.now() };
  const identifiers = packet.properties?.subscriptionIdentifier;
  const ids = identifiers === undefined ? [] : Array.isArray(identifiers) ? identifiers : [identifiers];
  const targets = new Set<Subscription>();
  for (const id of ids) {
    const subscription = byIdentifier.get(id);
    if (subscription) targets.add(subscription);
  }
  if (ids.length === 0) for (const subscription of byFilter.values()) if (topicMatches(subscription.filter, topic)) targets.add(subscription);
  for (const subscription of targets) for (const listener of subscription.listeners) listener(message);
}

/** MQTT filter matching ([MQTT-4.7]): `+` one level, `#` this level and below; `$` topics only by name. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (topic.startsWith('$') && (f[0] === '#' || f[0] === '+')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/**
 * Listens to a topic or filter (never `#` alone: refused). Returns the function that stops; the
 * connection closes a few seconds after the last listener stops.
 */
export function subscribeLive(filter: string, listener: Listener): () => void {
  if (filter === '#' || filter === '') throw new Error('Subscribe to a topic or a filter below the root, not "#"');
  clearTimeout(closeTimer);
  let subscription = byFilter.get(filter);
  if (!subscription) {
    subscription = { filter, identifier: nextIdentifier++, listeners: new Set() };
    byFilter.set(filter, subscription);
    byIdentifier.set(subscription.identifier, subscription);
    const created = subscription;
    void open().then((target) => {
      if (byFilter.get(filter) === created && target.connected) subscribeOn(target, created);
    }, (error: unknown) => {
      liveStatus.value = 'error';
      liveError.value = error instanceof Error ? error.message : String(error);
    });
  }
  subscription.listeners.add(listener);
  let stopped = false;
  const owned = subscription;
  return () => {
    if (stopped) return;
    stopped = true;
    owned.listeners.delete(listener);
    if (owned.listeners.size > 0) return;
    byFilter.delete(filter);
    byIdentifier.delete(owned.identifier);
    markSubscribed(filter, false);
    if (client?.connected) client.unsubscribe(filter);
    if (byFilter.size === 0) {
      clearTimeout(closeTimer);
      closeTimer = setTimeout(closeLive, CLOSE_DELAY_MS);
    }
  };
}

/** Ends the connection now (log out; the last listener gone). */
export function closeLive(): void {
  clearTimeout(closeTimer);
  const target = client;
  client = null;
  opening = null;
  if (target) target.end(true);
  liveStatus.value = 'idle';
  subscribedFilters.value = new Set();
}

// Logging out (or an ended session) closes the connection: its password is gone.
effect(() => {
  if (!login.value) closeLive();
});
