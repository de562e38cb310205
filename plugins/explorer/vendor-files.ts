/**
 * The browser modules the explorer imports by bare name (index.html's import map points here):
 * each package's own ES module build, read once from node_modules and served with an ETag.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

/** URL name → file under node_modules. */
export const VENDOR_FILES: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact/dist/preact.mjs',
  'preact-hooks.mjs': 'preact/hooks/dist/hooks.mjs',
  'htm.mjs': 'htm/dist/htm.module.js',
  'htm-preact.mjs': 'htm/preact/index.module.js',
  'signals.mjs': '@preact/signals/dist/signals.module.js',
  'signals-core.mjs': '@preact/signals-core/dist/signals-core.module.js',
  'uplot.mjs': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
  'mqtt.mjs': 'mqtt/dist/mqtt.esm.js',
};

interface VendorFile {
  body: string;
  etag: string;
}

/** Read once per process (tests start many servers). */
const loaded = new Map<string, VendorFile>();

function load(path: string): VendorFile {
  let file = loaded.get(path);
  if (!file) {
    // Source map comments would send the browser's devtools to files not served here.
    const body = readFileSync(path, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    file = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    loaded.set(path, file);
  }
  return file;
}

export function vendorRoutes(app: FastifyInstance, prefix: string, nodeModules: string): void {
  for (const [name, file] of Object.entries(VENDOR_FILES)) {
    const { body, etag } = load(join(nodeModules, file));
    const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    app.get(`${prefix}${name}`, (request, reply) => {
      void reply.header('etag', etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).header('x-content-type-options', 'nosniff').send(body);
    });
  }
}
