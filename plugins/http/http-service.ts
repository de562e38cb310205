/** What the http plugin provides: one fastify instance served on the HTTP and HTTPS ports. */
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
}

declare module '../../kernel/services' {
  interface EngineServices {
    http: HttpService;
  }
}
