/**
 * The import rule holds over the repository: no plugin imports another plugin's internals, lib/
 * imports only lib/ and kernel/, the kernel imports neither (import-rule.ts; docs/architecture.md).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { moduleSpecifiers, ruleBreaks, SOURCE_FILE, type ImportEdge } from './import-rule';

const ROOT = join(__dirname, '..', '..', '..');
const CHECKED = ['kernel', 'lib', 'plugins'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE_FILE.test(name) ? [path] : [];
  });
}

function repositoryBreaks(root = ROOT): ImportEdge[] {
  return CHECKED.flatMap((tier) => sourceFiles(join(root, tier))).flatMap((path) => {
    const file = relative(root, path).split(sep).join('/');
    return ruleBreaks(file, readFileSync(path, 'utf8'));
  });
}

describe('architecture: the import rule', () => {
  it('no file under kernel/, lib/ or plugins/ imports what its tier may not (kernel → kernel; lib → lib, kernel; a plugin → itself, lib, kernel)', () => {
    const breaks = repositoryBreaks();
    assert.deepEqual(breaks.map((e) => `${e.file} → ${e.target}`), [], 'these imports break the tier rule (docs/architecture.md)');
  });

  describe('the checker', () => {
    it('reads static, type-only, re-export, side-effect, dynamic, require, import-type and declare-module specifiers', () => {
      const text = [
        "import { a } from './a';",
        "import type { B } from '../b';",
        "export { c } from './c';",
        "export * from './d';",
        "import './e';",
        "const f = import('./f');",
        "const g = require('./g');",
        "const j = require.resolve('./j');",
        "let h: import('./h').H;",
        "declare module './i' { interface I { x: 1 } }",
        "import fs from 'node:fs';",
      ].join('\n');
      assert.deepEqual(moduleSpecifiers('x.ts', text), ['./a', '../b', './c', './d', './e', './f', './g', './j', './h', './i', 'node:fs']);
    });

    it('names a plugin importing another plugin, lib/ importing a plugin, and the kernel importing lib/ or a plugin', () => {
      assert.deepEqual(ruleBreaks('plugins/rest/x.ts', "import { y } from '../data/y';"), [{ file: 'plugins/rest/x.ts', target: 'plugins/data/y' }]);
      assert.deepEqual(ruleBreaks('lib/values/x.ts', "import { y } from '../../plugins/data/y';"), [{ file: 'lib/values/x.ts', target: 'plugins/data/y' }]);
      assert.deepEqual(ruleBreaks('kernel/x.ts', "export { y } from '../lib/y';"), [{ file: 'kernel/x.ts', target: 'lib/y' }]);
      assert.deepEqual(ruleBreaks('kernel/auth/x.ts', "const y = import('../../plugins/http/y');"), [{ file: 'kernel/auth/x.ts', target: 'plugins/http/y' }]);
    });

    it('names an import by absolute path, whatever it points at (no tier imports that way)', () => {
      assert.deepEqual(ruleBreaks('plugins/rest/x.ts', "import { y } from '/srv/engine/plugins/data/y';"), [{ file: 'plugins/rest/x.ts', target: '/srv/engine/plugins/data/y' }]);
    });

    it('reads every source tsc compiles or Node loads, not only .ts: a .cts file (imported as ./x.cjs) or .mts file is read too', () => {
      const root = mkdtempSync(join(tmpdir(), 'engine-import-rule-'));
      try {
        const files: Record<string, string> = {
          'plugins/a/index.ts': "import { y } from './c.cjs';\nexport const x = y;\n",
          'plugins/a/c.cts': "import { secret } from '../b/internal';\nexport const y = secret;\n",
          'plugins/a/m.mts': "export { secret } from '../b/internal.js';\n",
          'plugins/b/internal.ts': 'export const secret = 1;\n',
          'kernel/clock.ts': 'export {};\n',
          'lib/sorted.ts': 'export {};\n',
        };
        for (const [file, text] of Object.entries(files)) {
          mkdirSync(dirname(join(root, file)), { recursive: true });
          writeFileSync(join(root, file), text);
        }
        assert.deepEqual(repositoryBreaks(root).map((e) => `${e.file} → ${e.target}`), ['plugins/a/c.cts → plugins/b/internal', 'plugins/a/m.mts → plugins/b/internal']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });

    it('lets a plugin import its own files, lib/, the kernel and packages, and lib/ import the kernel', () => {
      const plugin = "import { a } from '../a';\nimport { b } from '../../../lib/b';\nimport { c } from '../../../kernel/c';\nimport { d } from 'fastify';";
      assert.deepEqual(ruleBreaks('plugins/rest/routes/x.ts', plugin), []);
      assert.deepEqual(ruleBreaks('lib/x.ts', "import { e } from '../kernel/errors';\nimport { f } from './values/f';"), []);
    });
  });
});
