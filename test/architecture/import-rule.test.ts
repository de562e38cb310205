/**
 * The import rule holds over the repository: no plugin imports another plugin's internals, lib/
 * imports only lib/ and kernel/, the kernel imports neither (import-rule.ts; docs/architecture.md).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { moduleSpecifiers, ruleBreaks, type ImportEdge } from './import-rule';

const ROOT = join(__dirname, '..', '..', '..');
const CHECKED = ['kernel', 'lib', 'plugins'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function repositoryBreaks(): ImportEdge[] {
  return CHECKED.flatMap((tier) => sourceFiles(join(ROOT, tier))).flatMap((path) => {
    const file = relative(ROOT, path).split(sep).join('/');
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
        "let h: import('./h').H;",
        "declare module './i' { interface I { x: 1 } }",
        "import fs from 'node:fs';",
      ].join('\n');
      assert.deepEqual(moduleSpecifiers('x.ts', text), ['./a', '../b', './c', './d', './e', './f', './g', './h', './i', 'node:fs']);
    });

    it('names a plugin importing another plugin, lib/ importing a plugin, and the kernel importing lib/ or a plugin', () => {
      assert.deepEqual(ruleBreaks('plugins/rest/x.ts', "import { y } from '../data/y';"), [{ file: 'plugins/rest/x.ts', target: 'plugins/data/y' }]);
      assert.deepEqual(ruleBreaks('lib/values/x.ts', "import { y } from '../../plugins/data/y';"), [{ file: 'lib/values/x.ts', target: 'plugins/data/y' }]);
      assert.deepEqual(ruleBreaks('kernel/x.ts', "export { y } from '../lib/y';"), [{ file: 'kernel/x.ts', target: 'lib/y' }]);
      assert.deepEqual(ruleBreaks('kernel/auth/x.ts', "const y = import('../../plugins/http/y');"), [{ file: 'kernel/auth/x.ts', target: 'plugins/http/y' }]);
    });

    it('lets a plugin import its own files, lib/, the kernel and packages, and lib/ import the kernel', () => {
      const plugin = "import { a } from '../a';\nimport { b } from '../../../lib/b';\nimport { c } from '../../../kernel/c';\nimport { d } from 'fastify';";
      assert.deepEqual(ruleBreaks('plugins/rest/routes/x.ts', plugin), []);
      assert.deepEqual(ruleBreaks('lib/x.ts', "import { e } from '../kernel/errors';\nimport { f } from './values/f';"), []);
    });
  });
});
