/**
 * The `http` service's port: what the http plugin provides (one fastify instance served on the
 * HTTP and HTTPS ports) and what REST, the actions, the explorer and MQTT over WebSocket use.
 * Declared by the kernel so those plugins need nothing of plugins/http (kernel/services.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';

export interface HttpService {
  /** Register routes here (`fastify.register(plugin, { prefix })`) during your plugin's register. */
  readonly fastify: FastifyInstance;
  /** Base URLs once listening, e.g. `http://127.0.0.1:8080`; undefined when that port is off. */
  readonly urls: { http?: string; https?: string };
  /** SHA-256 fingerprint of the served certificate. */
  readonly certificateFingerprint?: string;
  /** The PEM pair HTTPS uses, for other TLS listeners (MQTTS, WSS). */
  readonly tls?: { cert: string; key: string };
  /**
   * The page `GET /` answers to a browser (a request whose Accept names `text/html`); every other
   * client keeps getting the JSON health document. The last plugin to set it wins. It is sent with
   * `pageSecurityHeaders(html)`.
   */
  setBrowserHome(html: string): void;
  /**
   * The security headers (Content-Security-Policy and others, page-security.ts) for an HTML page
   * as it will be sent; its inline scripts, and the `<style>` texts its scripts add, are allowed by
   * hash. Compute once per page.
   */
  pageSecurityHeaders(html?: string, inlineStyles?: readonly string[]): Record<string, string>;
  /**
   * Takes WebSocket upgrades of one exact path on the HTTP and HTTPS listeners (e.g. MQTT at
   * `/mqtt`). Upgrades of other paths are refused with 404.
   */
  handleUpgrade(path: string, handler: UpgradeHandler): void;
}

/** Takes over an upgrade request's socket (ws `WebSocketServer.handleUpgrade` fits). */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
