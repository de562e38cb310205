/**
 * Without a bundler, each level of the app's static imports would cost the browser one more round
 * trip before the first screen (a waterfall of about ten here). index.html is served with a
 * `<link rel="modulepreload">` for every module the entry imports statically, found once at start
 * by following the emitted `import … from './x.js'` statements, so all of them load at once.
 * Modules imported only with `import()` (charts, live MQTT) stay lazy.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ENTRY = 'main.js';
/** Static `import … from './x.js'` and `export … from './x.js'` of emitted ES modules. */
const STATIC_IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/** `import('./x.js')` of emitted ES modules (screens loaded on first use). */
const DYNAMIC_IMPORT = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

const relativeTo = (scriptsDir: string, file: string): string => relative(scriptsDir, file).split('\\').join('/');

/** The modules reachable from `start` by static imports (absolute paths, `start` first). */
function staticClosure(start: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT]) {
      for (const match of text.matchAll(pattern)) visit(join(dirname(file), match[1]));
    }
  };
  visit(start);
  return [...seen];
}

/** The app's modules reachable from the entry by static imports, relative to `scriptsDir`, entry first. */
export function staticModules(scriptsDir: string): string[] {
  return staticClosure(join(scriptsDir, ENTRY)).map((file) => relativeTo(scriptsDir, file));
}

/**
 * For each module the app imports with `import()` (relative ones: the screens), the modules of its
 * static closure that the shell does not already load: the page preloads them all at once before
 * the `import()`, instead of walking their imports level by level.
 */
export function lazyModules(scriptsDir: string): Record<string, string[]> {
  const shell = new Set(staticClosure(join(scriptsDir, ENTRY)));
  const out: Record<string, string[]> = {};
  const pending = [...shell];
  const done = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(DYNAMIC_IMPORT)) {
      const target = join(dirname(file), match[1]);
      if (!existsSync(target) || out[relativeTo(scriptsDir, target)]) continue;
      const closure = staticClosure(target);
      out[relativeTo(scriptsDir, target)] = closure.filter((module) => !shell.has(module)).map((module) => relativeTo(scriptsDir, module));
      pending.push(...closure);
    }
  }
  return out;
}

/**
 * index.html with a modulepreload link per static module before the entry's script tag, and the
 * lazy modules' closures as JSON (`#lazy-modules`, read by app.ts).
 */
export function withModulePreloads(html: string, scriptsDir: string): string {
  const links = staticModules(scriptsDir).map((path) => `<link rel="modulepreload" href="./js/${path}">`).join('\n');
  const lazy = `<script type="application/json" id="lazy-modules">${JSON.stringify(lazyModules(scriptsDir)).replace(/</g, '\\u003c')}</script>`;
  const entry = `<script type="module" src="./js/${ENTRY}"></script>`;
  if (!html.includes(entry)) throw new Error(`explorer: index.html has no ${entry}`);
  return html.replace(entry, `${links}\n${lazy}\n${entry}`);
}
