/**
 * The shapes the server sends the explorer are declared once, in lib/explorer/api-types.d.ts,
 * which both the server (plugins/) and the app (apps/explorer/src) import as types. A declaration
 * file is not emitted and the builds skip checking declaration files (skipLibCheck), so this
 * checks it on its own, and that no other source file declares these shapes a second time.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..', '..');
const SHARED = join(ROOT, 'lib', 'explorer', 'api-types.d.ts');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** Names of the interfaces and type aliases a file declares at its top level. */
function declaredTypes(source: ts.SourceFile): string[] {
  return source.statements
    .filter((node): node is ts.InterfaceDeclaration | ts.TypeAliasDeclaration => ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node))
    .map((node) => node.name.text);
}

/** Whether a file imports (or re-exports from) the shared declarations. */
function importsShared(source: ts.SourceFile): boolean {
  return source.statements.some((node) => (ts.isImportDeclaration(node) || ts.isExportDeclaration(node))
    && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)
    && /(^|\/)lib\/explorer\/api-types(\.js)?$/.test(node.moduleSpecifier.text));
}

/** The shapes declared there, each once: the explore commands', the events stream's, the sessions' and the messages' the mq reads answer. */
const SHAPES = [
  'TopicNodeSummary', 'BrowseTopicsResult', 'BusyTopic', 'Overview', 'ActiveTopic', 'Activity',
  'DeleteRetainedResult', 'DisconnectClientResult', 'DeleteSessionsResult',
  'MqSessionSummary', 'MqSessionPage', 'MqSessionSubscription', 'MqSessionDescription', 'MqSessionDescriptions',
  'NodePart', 'OverviewNode',
  'UserProperty', 'ShapedMessage', 'StoredMessage', 'RetainedMessage', 'RetainedPage',
  'OverviewSample', 'OverviewHistory', 'SubscriptionRow', 'SubscriptionPage',
];

describe('explorer API types (lib/explorer/api-types.d.ts)', () => {
  const shared = parse(SHARED);
  const names = declaredTypes(shared);
  const server = sourceFiles(join(ROOT, 'plugins')).map(parse);
  const app = sourceFiles(join(ROOT, 'apps', 'explorer', 'src')).map(parse);
  const library = sourceFiles(join(ROOT, 'lib')).filter((file) => file !== SHARED).map(parse);

  it('type-checks on its own with no DOM and no Node types, and imports nothing', () => {
    assert.deepEqual([...names].sort(), [...SHAPES].sort());
    assert.equal(shared.statements.filter((node) => ts.isImportDeclaration(node)).length, 0);
    const program = ts.createProgram([SHARED], { strict: true, noEmit: true, skipLibCheck: false, lib: ['lib.es2022.d.ts'], types: [] });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    assert.deepEqual(problems, []);
  });

  it('the server and the app both import it, and no other file declares its shapes again', () => {
    const importers = [...server, ...app].filter(importsShared).map((source) => relative(ROOT, source.fileName));
    assert.ok(importers.some((file) => file.startsWith('plugins/messaging/')), `server importers: ${importers.join(', ')}`);
    assert.ok(importers.some((file) => file.startsWith('plugins/explorer/')), `server importers: ${importers.join(', ')}`);
    assert.ok(importers.some((file) => file.startsWith('apps/explorer/src/')), `app importers: ${importers.join(', ')}`);
    // The sessions' and the messages' shapes too, on both sides.
    for (const file of ['plugins/messaging/session-commands.ts', 'plugins/messaging/retrieve.ts', 'plugins/messaging/explore-commands.ts',
      'apps/explorer/src/screens/clients/types.ts', 'apps/explorer/src/screens/retained/types.ts', 'apps/explorer/src/screens/topics/format.ts']) {
      assert.ok(importers.includes(file), `${file} imports the shared shapes (importers: ${importers.join(', ')})`);
    }
    const again = [...server, ...app, ...library].flatMap((source) => declaredTypes(source).filter((name) => names.includes(name)).map((name) => `${relative(ROOT, source.fileName)}: ${name}`));
    assert.deepEqual(again, []);
  });
});
