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

/** The app's modules reachable from the entry by static imports, relative to `scriptsDir`, entry first. */
export function staticModules(scriptsDir: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT]) {
      for (const match of text.matchAll(pattern)) visit(join(dirname(file), match[1]));
    }
  };
  visit(join(scriptsDir, ENTRY));
  return [...seen].map((file) => relative(scriptsDir, file).split('\\').join('/'));
}

/** index.html with a modulepreload link per static module, before the entry's script tag. */
export function withModulePreloads(html: string, scriptsDir: string): string {
  const links = staticModules(scriptsDir).map((path) => `<link rel="modulepreload" href="./js/${path}">`).join('\n');
  const entry = `<script type="module" src="./js/${ENTRY}"></script>`;
  if (!html.includes(entry)) throw new Error(`explorer: index.html has no ${entry}`);
  return html.replace(entry, `${links}\n${entry}`);
}
