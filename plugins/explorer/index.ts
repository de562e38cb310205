/**
 * plugins/explorer: the web explorer (docs/explorer.md), a single-page app served at
 * `/apps/explorer/`. Its TypeScript (apps/explorer/src) is emitted as ES modules by the project's
 * own tsc into dist/apps/explorer; the browser resolves the bare imports (preact, htm,
 * @preact/signals, uplot, mqtt) through the import map in index.html to the packages' own ES
 * module builds, served from node_modules by vendor-files.ts. No bundler, nothing from a CDN.
 *
 * Also: the launcher page at `GET /` for browsers, the redirects of the established product's
 * app paths, and the coalesced statistics stream (events.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyCompress from '@fastify/compress';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { definePlugin } from '../../kernel/plugin';
import { explorerEvents } from './events';
import { overviewHistory } from './overview-history';
import { withModulePreloads } from './module-preloads';
import { vendorRoutes } from './vendor-files';

export const EXPLORER_PATH = '/apps/explorer/';

/** The repository root, from dist/plugins/explorer (built) or plugins/explorer (ts-node). */
function repositoryRoot(): string {
  for (const candidate of [resolve(__dirname, '../../..'), resolve(__dirname, '../..')]) {
    if (existsSync(join(candidate, 'apps/explorer/public/index.html'))) return candidate;
  }
  throw new Error('explorer: apps/explorer/public not found next to the server');
}

/** Files are used only as the type they are served with. */
const noSniff = (reply: FastifyReply): void => { void reply.header('x-content-type-options', 'nosniff'); };

export default definePlugin({
  name: 'explorer',
  description: 'The web explorer at /apps/explorer/: topics, live traffic, history, charts, tables, an API console',
  dependencies: ['http'],
  register(engine) {
    const http = engine.need('http');
    const root = repositoryRoot();
    const publicDir = join(root, 'apps/explorer/public');
    const scriptsDir = join(root, 'dist/apps/explorer');
    if (!existsSync(join(scriptsDir, 'main.js'))) throw new Error(`explorer: ${scriptsDir}/main.js is missing: run npm run build`);

    http.setBrowserHome(readFileSync(join(publicDir, 'launcher.html'), 'utf8'));
    const indexHtml = withModulePreloads(readFileSync(join(publicDir, 'index.html'), 'utf8'), scriptsDir);
    // The page holds a session token: only its own scripts run (docs/explorer.md, Security).
    const indexHeaders = http.pageSecurityHeaders(indexHtml);
    const { fastify } = http;
    fastify.register(async (app: FastifyInstance) => {
      await app.register(fastifyCompress, { global: true, threshold: 1024 });
      const sendIndex = (_request: unknown, reply: FastifyReply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').headers(indexHeaders).send(indexHtml);
      app.get(EXPLORER_PATH, sendIndex);
      app.get(`${EXPLORER_PATH}index.html`, sendIndex);
      // The app's modules change with each build: revalidated on every load. The pages are sent
      // only by their routes (with their security headers), not as files.
      await app.register(fastifyStatic, { root: publicDir, prefix: EXPLORER_PATH, decorateReply: false, cacheControl: true, maxAge: 0, index: false, allowedPath: (path) => !path.toLowerCase().endsWith('.html'), setHeaders: noSniff });
      await app.register(fastifyStatic, { root: scriptsDir, prefix: `${EXPLORER_PATH}js/`, decorateReply: false, cacheControl: true, maxAge: 0, allowedPath: (path) => path.endsWith('.js'), setHeaders: noSniff });
      vendorRoutes(app, `${EXPLORER_PATH}vendor/`, join(root, 'node_modules'));
      explorerEvents(app, engine, `${EXPLORER_PATH}events`);
      overviewHistory(app, engine, `${EXPLORER_PATH}overview-history`);
    });
    fastify.get('/apps/explorer', (_request, reply) => reply.redirect(EXPLORER_PATH));
    // The established product's app paths.
    for (const [from, screen] of [['MQExplorer', 'topics'], ['DataExplorer', 'tables']] as const) {
      fastify.get(`/apps/${from}`, (_request, reply) => reply.redirect(`${EXPLORER_PATH}#/${screen}`));
      fastify.get(`/apps/${from}/`, (_request, reply) => reply.redirect(`${EXPLORER_PATH}#/${screen}`));
    }
  },
});
