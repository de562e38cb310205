/**
 * The import rule between the code tiers (docs/architecture.md, "Code tiers and the import rule"):
 *
 * - kernel/ imports only kernel/ (and packages);
 * - lib/ imports only lib/ and kernel/;
 * - a plugin imports only its own files, kernel/ and lib/.
 *
 * Packages (`node:*`, npm) and the repository's package.json are allowed everywhere. This file reads a source's imports and names
 * what breaks the rule; import-rule.test.ts runs it over the repository.
 */
import { posix } from 'node:path';
import ts from 'typescript';

/**
 * The files the rule reads: every source tsc compiles or Node loads, not only `.ts` (a `.cts` file
 * imported as `./x.cjs` is compiled too), declaration files included.
 */
export const SOURCE_FILE = /\.[cm]?[jt]sx?$/;

/** Every module a source names: import / export … from, import(), require(), require.resolve(), import('x').T, declare module. */
export function moduleSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const add = (node: ts.Node | undefined): void => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isModuleDeclaration(node)) add(node.name);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = (ts.isIdentifier(callee) && callee.text === 'require')
        || (ts.isPropertyAccessExpression(callee) && callee.name.text === 'resolve' && ts.isIdentifier(callee.expression) && callee.expression.text === 'require');
      if ((isImport || isRequire) && node.arguments.length > 0) add(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The tier of a repository path (posix, relative to the root): 'kernel', 'lib', 'plugins/<name>', or the path's first folder. */
export function tierOf(path: string): string {
  const [first, second] = path.split('/');
  return first === 'plugins' && second !== undefined ? `plugins/${second}` : first;
}

/** The tiers a tier may import, besides packages. */
function allowedTiers(tier: string): readonly string[] {
  if (tier === 'kernel') return ['kernel'];
  if (tier === 'lib') return ['lib', 'kernel'];
  if (tier.startsWith('plugins/')) return [tier, 'lib', 'kernel'];
  return [];
}

export interface ImportEdge {
  /** The importing file, relative to the repository root. */
  file: string;
  /** The imported module, relative to the repository root, without extension. */
  target: string;
}

/** The relative imports of `file` that leave what its tier may import (packages are never edges). */
export function ruleBreaks(file: string, text: string): ImportEdge[] {
  const tier = tierOf(file);
  const allowed = allowedTiers(tier);
  const breaks: ImportEdge[] = [];
  for (const specifier of moduleSpecifiers(file, text)) {
    if (!specifier.startsWith('.') && !specifier.startsWith('/')) continue; // a package
    // An absolute path is in no tier: the rule cannot place it, so it always breaks the rule.
    const target = specifier.startsWith('/') ? specifier : posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.(js|ts)$/, '');
    if (posix.basename(target) === 'package.json') continue; // the repository's manifest (read from dist/ at run time), not code
    if (!allowed.includes(tierOf(target))) breaks.push({ file, target });
  }
  return breaks;
}
