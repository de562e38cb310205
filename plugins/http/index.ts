/**
 * plugins/http: one fastify instance served on `listening_http_port` and `listening_https_port`
 * (self-signed certificate unless tls files are set). REST and actions register routes on it.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { EngineError } from '../../kernel/errors';
import { clientError } from '../../kernel/client-error';
import { loadTlsMaterial } from '../../lib/tls/tls-certificate';
import { applyClientVerification, loadClientVerification, watchClientVerification } from '../../lib/tls/client-certificates';
import { pageSecurityHeaders } from './page-security';
import { registerHealthRoutes } from './health-routes';
import { countRequests } from './request-metrics';
import { errorBody, rawHttpErrorResponse, replyHttpError, writeRawHttpError } from '../../lib/http/http-errors';
import type { HttpService, UpgradeHandler } from '../../kernel/http-service';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export default definePlugin({
  name: 'http',
  description: 'HTTP and HTTPS listeners (fastify)',
  async register(engine) {
    const { settings } = engine;
    let handler: Handler | undefined;
    // Once stopping, every response closes its connection, so keep-alive clients cannot keep the
    // process alive (they reconnect elsewhere).
    let stopping = false;
    const serve: Handler = (req, res) => {
      if (stopping) res.shouldKeepAlive = false;
      handler!(req, res);
    };
    const plainServer = createHttpServer(serve);
    const fastify = Fastify({
      loggerInstance: engine.log.child({ plugin: 'http' }),
      logController: new LogController({ disableRequestLogging: true }),
      // One shared logger instead of a pino child per request: measurable on small requests.
      childLoggerFactory: (logger) => logger,
      // Malformed URLs, overlong path segments and broken requests answer in the engine's error
      // shape too, not fastify's.
      frameworkErrors: (error, _request, reply) => {
        const engineError = new EngineError('INVALID_PARAMETER', { param: 'url', reason: `the URL is not valid (${error.message})` });
        void (reply as unknown as { code(status: number): { send(body: unknown): void } }).code(400).send(errorBody(engineError));
      },
      routerOptions: {
        maxParamLength: MAX_PATH_SEGMENT,
        onMaxParamLength: (_path: string, _req: IncomingMessage, res: ServerResponse) => {
          const engineError = new EngineError('INVALID_PARAMETER', { param: 'url', reason: `a path segment is longer than ${MAX_PATH_SEGMENT} characters` });
          writeRawHttpError(res, 414, engineError);
        },
      },
      clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
        if (error.code === 'ECONNRESET' || !socket.writable) return;
        const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
        const engineError = new EngineError('INVALID_PARAMETER', { param: tooLarge ? 'headers' : 'request', reason: tooLarge ? 'the request line and headers are too large' : 'the request is not valid HTTP' });
        socket.end(rawHttpErrorResponse(tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request', engineError));
      },
      bodyLimit: settings.body_limit_bytes,
      serverFactory: (fastifyHandler) => {
        handler = fastifyHandler;
        return plainServer;
      },
    });

    const tls = settings.listening_https_port === null ? undefined : await loadTlsMaterial({
      dataDir: settings.data_dir, certFile: settings.tls_cert_file, keyFile: settings.tls_key_file,
    });
    if (tls?.generated) engine.log.info({ fingerprint: tls.fingerprint }, 'generated a self-signed TLS certificate');
    // Client certificates (tls_client_certificates): asked for in the handshake, judged by the
    // kernel; a connection whose certificate is refused gets 401 on every request, whatever route.
    const clientVerification = tls ? await loadClientVerification(settings) : undefined;
    const serveSecure: Handler = clientVerification ? (req, res) => {
      try {
        engine.certificates.authenticate(req.socket);
      } catch (error) {
        // Never thrown into the server's 'request' event (that would end the process): a fault
        // is this request's 500, logged with its reference.
        const shown = clientError(error, engine.log, { method: req.method, url: req.url });
        // The certificate cannot change on this connection: it is not kept open.
        res.shouldKeepAlive = false;
        writeRawHttpError(res, shown.status, shown);
        return;
      }
      serve(req, res);
    } : serve;
    const secureServer = tls ? createHttpsServer({ cert: tls.cert, key: tls.key, ...clientVerification }, serveSecure) : undefined;
    // A CA or CRL file replaced while running applies to new connections.
    const stopWatching = tls && secureServer && clientVerification ? watchClientVerification(settings,
      (options) => applyClientVerification(secureServer, tls, options),
      (error) => (error
        ? engine.log.error({ err: error, listeners: 'https' }, 'the client CA and CRL files were not reloaded: the previous ones stay')
        : engine.log.info({ listeners: 'https' }, 'reloaded the client CA and CRL files'))) : undefined;

    countRequests(engine, fastify as unknown as FastifyInstance);
    engine.metrics.add({
      name: 'engine_http_connections',
      help: 'Open HTTP connections, by scheme (MQTT over WebSocket on /mqtt included until upgraded)',
      kind: 'gauge',
      labelNames: ['scheme'],
      read: async () => [
        { labels: { scheme: 'http' }, value: await openConnections(plainServer) },
        { labels: { scheme: 'https' }, value: secureServer ? await openConnections(secureServer) : 0 },
      ],
    });

    fastify.setErrorHandler((error, request, reply) => replyHttpError(reply, request, error, settings.body_limit_bytes));
    fastify.setNotFoundHandler((request, reply) => {
      const url = request.url.length > 200 ? `${request.url.slice(0, 200)}…` : request.url;
      const error = new EngineError('ROUTE_NOT_FOUND', { method: request.method, url });
      void reply.code(error.status).send(errorBody(error));
    });
    let browserHome: string | undefined;
    let browserHomeHeaders: Record<string, string> = {};
    registerHealthRoutes(fastify as unknown as FastifyInstance, engine);
    fastify.get('/', async (request, reply) => {
      if (browserHome !== undefined) void reply.header('vary', 'Accept');
      if (browserHome !== undefined && (request.headers.accept ?? '').includes('text/html')) {
        return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').headers(browserHomeHeaders).send(browserHome);
      }
      return { name: engine.name, version: engine.version, plugins: engine.plugins.map((plugin) => plugin.name) };
    });

    const upgrades = new Map<string, UpgradeHandler>();
    const routeUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
      const path = (request.url ?? '/').split('?')[0];
      const handler = upgrades.get(path);
      if (handler && !stopping) {
        handler(request, socket, head);
        return;
      }
      // Node takes its own error listener off an upgraded socket: a client resetting it would
      // otherwise be an uncaught error.
      socket.on('error', () => socket.destroy());
      socket.end(stopping ? 'HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n' : 'HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    };
    plainServer.on('upgrade', routeUpgrade);

    const urls: HttpService['urls'] = {};
    const service: HttpService = {
      fastify: fastify as unknown as HttpService['fastify'],
      urls,
      certificateFingerprint: tls?.fingerprint,
      tls: tls && { cert: tls.cert, key: tls.key },
      setBrowserHome(html) {
        browserHome = html;
        browserHomeHeaders = pageSecurityHeaders(html);
      },
      pageSecurityHeaders,
      handleUpgrade(path, handler) { upgrades.set(path, handler); },
    };
    secureServer?.on('upgrade', routeUpgrade);
    engine.provide('http', service);

    engine.onStart(async () => {
      await fastify.ready();
      const host = engine.listenHost;
      if (settings.listening_http_port !== null) urls.http = await listen(plainServer, settings.listening_http_port, host, 'http');
      if (urls.http && settings.tls_client_certificates === 'required') {
        engine.log.warn({ port: settings.listening_http_port }, 'tls_client_certificates is required on HTTPS, but the plain HTTP port still accepts passwords: set listening_http_port to off to require certificates everywhere');
      }
      if (secureServer && settings.listening_https_port !== null) urls.https = await listen(secureServer, settings.listening_https_port, host, 'https');
      engine.log.info({ host, ...urls }, 'listening');
    });
    // Listening while configured (a listener that failed, or closed, makes the server not ready).
    engine.readiness.add('http listeners', () => (settings.listening_http_port === null || plainServer.listening)
      && (!secureServer || settings.listening_https_port === null || secureServer.listening));
    // Draining: no new connections, keep-alive ones close after their response, requests in
    // flight are answered (their writes committed) within SHUTDOWN_GRACE_MS.
    engine.onDrain(async () => {
      stopping = true;
      stopWatching?.();
      await Promise.all([stop(plainServer), secureServer && stop(secureServer)]);
    });
    engine.onClose(async () => {
      await fastify.close();
    });
  },
});

function openConnections(server: Server): Promise<number> {
  if (!server.listening) return Promise.resolve(0);
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

/** Longest path segment routed (names are at most 64 bytes; longer ones get a clear 400 from the route). */
const MAX_PATH_SEGMENT = 1024;

function listen(server: Server, port: number, host: string, scheme: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve(`${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}`);
    });
  });
}

/** In-flight requests get this long to finish before their connections are cut. */
const SHUTDOWN_GRACE_MS = 3000;

function stop(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
