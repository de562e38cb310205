/**
 * plugins/mqtt: the MQTT 3.1.1 and 5 broker (docs/mqtt.md). TCP (`mqtt_port`), TLS (`mqtts_port`),
 * WebSocket (`mqtt_ws_port`) and secure WebSocket (`mqtt_wss_port`) all hand their streams to one
 * connection handler (connection.ts); messages, subscriptions and sessions are the message core's
 * (plugins/messaging), on the durable message log.
 */
import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server as HttpsServer } from 'node:https';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { definePlugin } from '../../kernel/plugin';
import { loadTlsMaterial } from '../../lib/tls/tls-certificate';
import { applyClientVerification, loadClientVerification, watchClientVerification } from '../../lib/tls/client-certificates';
import { Broker } from './broker';
import { TRANSPORTS } from './connection-fields';
import type { MqttService } from './mqtt-service';
import { tcpServer, tlsServer } from './transports/tcp';
import { webSocketServer, webSocketUpgrades, type WebSocketListener } from './transports/websocket';

export default definePlugin({
  name: 'mqtt',
  description: 'MQTT 3.1.1 and 5 broker over TCP, TLS, WebSocket and secure WebSocket, on the message core',
  dependencies: ['messaging'],
  register(engine) {
    const { settings } = engine;
    const broker = new Broker(engine);
    const ports: MqttService['ports'] = {};
    engine.provide('mqtt', { ports });
    engine.metrics.add({
      name: 'engine_mqtt_connections',
      help: 'Open MQTT connections, by transport (tcp, tls, ws, wss; MQTT over WebSocket on the HTTP ports included)',
      kind: 'gauge',
      labelNames: ['transport'],
      read: () => broker.openByTransport.map((value, i) => ({ labels: { transport: TRANSPORTS[i] }, value })),
    });
    const servers: Server[] = [];
    const webSockets: WebSocketListener[] = [];
    // MQTT over WebSocket at /mqtt on the HTTP(S) ports too: same origin for browser pages.
    const httpUpgrades = engine.has('http') ? webSocketUpgrades(broker) : undefined;
    if (httpUpgrades) engine.need('http').handleUpgrade(MQTT_HTTP_PATH, httpUpgrades.handleUpgrade);
    let stopWatching: (() => void) | undefined;

    engine.onStart(async () => {
      const host = engine.listenHost;
      const secure = settings.mqtts_port !== null || settings.mqtt_wss_port !== null;
      // The HTTPS certificate pair when the http plugin serves one, else the same files
      // (tls_cert_file / tls_key_file) or self-signed pair in data_dir/tls it would use.
      let tls = secure && engine.has('http') ? engine.need('http').tls : undefined;
      if (secure && !tls) {
        const material = await loadTlsMaterial({ dataDir: settings.data_dir, certFile: settings.tls_cert_file, keyFile: settings.tls_key_file });
        if (material.generated) broker.log.info({ fingerprint: material.fingerprint }, 'generated a self-signed TLS certificate');
        tls = { cert: material.cert, key: material.key };
      }
      // Client certificates (tls_client_certificates) on the TLS listeners: judged at CONNECT by the kernel.
      const clientVerification = tls ? await loadClientVerification(settings) : undefined;
      if (settings.mqtt_port !== null) ports.mqtt = await listen(servers, tcpServer(broker), settings.mqtt_port, host, broker.log);
      const secureServers: TlsServer[] = [];
      if (tls && settings.mqtts_port !== null) {
        const server = tlsServer(broker, tls, clientVerification);
        secureServers.push(server);
        ports.mqtts = await listen(servers, server, settings.mqtts_port, host, broker.log);
      }
      if (settings.mqtt_ws_port !== null) {
        const listener = webSocketServer(broker);
        webSockets.push(listener);
        ports.ws = await listen([], listener.server, settings.mqtt_ws_port, host, broker.log);
      }
      if (tls && settings.mqtt_wss_port !== null) {
        const listener = webSocketServer(broker, tls, clientVerification);
        webSockets.push(listener);
        secureServers.push(listener.server as HttpsServer);
        ports.wss = await listen([], listener.server, settings.mqtt_wss_port, host, broker.log);
      }
      // A CA or CRL file replaced while running applies to new connections of the TLS listeners.
      if (tls && clientVerification && secureServers.length > 0) {
        const pair = tls;
        stopWatching = watchClientVerification(settings,
          (options) => { for (const server of secureServers) applyClientVerification(server, pair, options); },
          (error) => (error
            ? broker.log.error({ err: error, listeners: 'mqtts, wss' }, 'the client CA and CRL files were not reloaded: the previous ones stay')
            : broker.log.info({ listeners: 'mqtts, wss' }, 'reloaded the client CA and CRL files')));
      }
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
      const urls: Record<string, string> = {};
      if (ports.mqtt !== undefined) urls.mqtt = `mqtt://${shown}:${ports.mqtt}`;
      if (ports.mqtts !== undefined) urls.mqtts = `mqtts://${shown}:${ports.mqtts}`;
      if (ports.ws !== undefined) urls.ws = `ws://${shown}:${ports.ws}`;
      if (ports.wss !== undefined) urls.wss = `wss://${shown}:${ports.wss}`;
      broker.log.info({ host, ...urls }, 'listening');
      if (settings.tls_client_certificates === 'required' && (urls.mqtt || urls.ws)) {
        broker.log.warn({ mqtt: urls.mqtt, ws: urls.ws }, 'tls_client_certificates is required on the TLS listeners, but plain MQTT listeners still accept passwords: set mqtt_port and mqtt_ws_port to off to require certificates everywhere');
      }
    });

    // Listening on every configured port (started, and none failed or closed since).
    engine.readiness.add('mqtt listeners', () => servers.every((server) => server.listening) && webSockets.every((listener) => listener.server.listening));
    engine.onDrain(async () => {
      const closed = servers.map((server) => new Promise((resolve) => server.close(resolve)));
      for (const listener of webSockets) listener.server.close();
      await broker.drain();
      await Promise.all(closed);
    });
    engine.onClose(async () => {
      stopWatching?.();
      await broker.stop();
      await Promise.all(webSockets.map((listener) => listener.close()));
      await httpUpgrades?.close();
    });
  },
});

/** The path of MQTT over WebSocket on the HTTP and HTTPS ports. */
export const MQTT_HTTP_PATH = '/mqtt';

function listen(servers: Server[], server: Server, port: number, host: string, log: Logger): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // A failed accept (too many open files) is the listener's 'error': logged, never thrown.
      server.on('error', (error) => log.error({ err: error, port }, 'MQTT listener error'));
      servers.push(server);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
