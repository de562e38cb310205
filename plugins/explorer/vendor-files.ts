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
  // CodeMirror 6 and what it imports: the API console's editor, loaded only when the console opens.
  'cm-state.mjs': '@codemirror/state/dist/index.js',
  'cm-view.mjs': '@codemirror/view/dist/index.js',
  'cm-language.mjs': '@codemirror/language/dist/index.js',
  'cm-commands.mjs': '@codemirror/commands/dist/index.js',
  'cm-lint.mjs': '@codemirror/lint/dist/index.js',
  'cm-lang-json.mjs': '@codemirror/lang-json/dist/index.js',
  'cm-streamparser.mjs': '@codemirror/streamparser/dist/index.js',
  'lezer-common.mjs': '@lezer/common/dist/index.js',
  'lezer-highlight.mjs': '@lezer/highlight/dist/index.js',
  'lezer-lr.mjs': '@lezer/lr/dist/index.js',
  'lezer-json.mjs': '@lezer/json/dist/index.js',
  'style-mod.mjs': 'style-mod/src/style-mod.js',
  'w3c-keyname.mjs': 'w3c-keyname/index.js',
  'crelt.mjs': 'crelt/index.js',
  'find-cluster-break.mjs': '@marijn/find-cluster-break/src/index.js',
};

/**
 * Edits to a vendor file, each applied once when it is read (a missing text fails the start, so an
 * upgrade that changes it is noticed). style-mod (CodeMirror's styles) puts its rules in a
 * `<style>` element when mounted on a document, which the page's Content-Security-Policy refuses
 * (`style-src 'self'`, no inline styles); a constructed stylesheet in `adoptedStyleSheets`, which it
 * already uses for shadow roots, is not inline markup and is allowed.
 */
const VENDOR_PATCHES: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  'style-mod.mjs': [['if (!root.head && root.adoptedStyleSheets && win.CSSStyleSheet) {', 'if (root.adoptedStyleSheets && win.CSSStyleSheet) {']],
};

interface VendorFile {
  body: string;
  etag: string;
}

/** Read once per process (tests start many servers). */
const loaded = new Map<string, VendorFile>();

function load(path: string, patches: ReadonlyArray<readonly [string, string]> = []): VendorFile {
  let file = loaded.get(path);
  if (!file) {
    // Source map comments would send the browser's devtools to files not served here.
    let body = readFileSync(path, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    for (const [search, replacement] of patches) {
      if (!body.includes(search)) throw new Error(`explorer: ${path} no longer holds the text patched for the page's Content-Security-Policy: ${search}`);
      body = body.replace(search, replacement);
    }
    file = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    loaded.set(path, file);
  }
  return file;
}

export function vendorRoutes(app: FastifyInstance, prefix: string, nodeModules: string): void {
  for (const [name, file] of Object.entries(VENDOR_FILES)) {
    const { body, etag } = load(join(nodeModules, file), VENDOR_PATCHES[name]);
    const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    app.get(`${prefix}${name}`, (request, reply) => {
      void reply.header('etag', etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).header('x-content-type-options', 'nosniff').send(body);
    });
  }
}
