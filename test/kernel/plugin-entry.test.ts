/**
 * The package entry (package.json `exports`/`main`/`types` → dist/kernel/index) as a third-party
 * plugin author meets it: the examples (examples/hello-plugin.ts, a command and a route;
 * examples/announce-plugin.ts, a publish through the message core's port) are copied to a folder
 * outside the repository whose node_modules/engine is this package, type-checked and built there
 * with the TypeScript compiler, and each built file is loaded by a real engine whose `plugins`
 * setting names it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { call, startServer } from '../helpers/server';
import { brokerUrl, connectOk } from '../mqtt/mqtt-helpers';
import { SYSTEM_PRINCIPAL } from '../../kernel/auth/principal';

const ROOT = join(__dirname, '..', '..', '..');
const EXAMPLES = ['hello-plugin.ts', 'announce-plugin.ts'];

describe('package entry for plugin authors (kernel/index.ts)', function () {
  this.timeout(120000); // type-checking the declaration files of fastify and pino takes a while under load

  const author = mkdtempSync(join(tmpdir(), 'engine-plugin-author-'));
  const linked = join(author, 'node_modules', 'engine');
  const built = (name: string): string => join(author, 'out', name);
  let program: ts.Program;

  before(() => {
    mkdirSync(join(author, 'node_modules'));
    symlinkSync(ROOT, linked, 'dir'); // as `npm install engine` (or `npm link`) would leave it
    mkdirSync(join(author, 'src'));
    for (const example of EXAMPLES) copyFileSync(join(ROOT, 'examples', example), join(author, 'src', example));
    program = ts.createProgram(EXAMPLES.map((example) => join(author, 'src', example)), {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      rootDir: join(author, 'src'),
      outDir: join(author, 'out'),
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      skipLibCheck: false, // our declaration files are checked too
    });
  });

  after(() => {
    unlinkSync(linked); // the link only, never what it points at
    rmSync(author, { recursive: true, force: true });
  });

  it('the package name resolves to the built entry declared in package.json', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(manifest.main, 'dist/kernel/index.js');
    assert.equal(manifest.types, 'dist/kernel/index.d.ts');
    assert.deepEqual(manifest.exports['.'], { types: './dist/kernel/index.d.ts', default: './dist/kernel/index.js' });
    const resolved = ts.resolveModuleName('engine', join(author, 'src', 'hello-plugin.ts'), program.getCompilerOptions(), ts.sys);
    assert.equal(resolved.resolvedModule?.resolvedFileName, join(ROOT, 'dist', 'kernel', 'index.d.ts'));
  });

  it('the examples import only the package entry', () => {
    for (const example of EXAMPLES) {
      const imports = [...readFileSync(join(ROOT, 'examples', example), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]);
      assert.deepEqual(imports, ['engine'], example);
    }
  });

  it('the examples type-check against the entry with no errors (engine.need typed for http and messageCore), reaching no plugin internals', () => {
    const problems = ts.getPreEmitDiagnostics(program)
      .filter((diagnostic) => !diagnostic.file?.fileName.includes('/node_modules/')) // other packages' declarations are theirs
      .map((diagnostic) => ts.formatDiagnostic(diagnostic, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => author, getNewLine: () => '\n' }));
    assert.deepEqual(problems, []);
    const fromPlugins = program.getSourceFiles().map((file) => relative(join(ROOT, 'dist'), file.fileName)).filter((file) => file.startsWith('plugins/'));
    assert.deepEqual(fromPlugins, [], 'plugin files the entry reaches');
  });

  it('loading the entry loads no plugin and starts nothing (the process exits on its own)', async () => {
    const script = `const api = require('engine'); console.log(JSON.stringify({ names: Object.keys(api).sort(), files: Object.keys(require.cache) }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: author });
    const { names, files } = JSON.parse(stdout) as { names: string[]; files: string[] };
    assert.deepEqual(names, ['ERRORS', 'EngineError', 'SYSTEM_PRINCIPAL', 'definePlugin', 'isEngineError', 'toEngineError']);
    assert.deepEqual(files.map((file) => relative(ROOT, file)).filter((file) => !file.startsWith('dist/kernel/')), []);
  });

  it('the built plugin, named in the plugins setting, answers through a real engine', async () => {
    const emitted = program.emit();
    assert.equal(emitted.emitSkipped, false);
    const server = await startServer({ plugins: ['http', built('hello-plugin.js')], plugin_options: { hello: { greeting: 'Hi' } } });
    try {
      assert.deepEqual(server.engine.plugins.map((plugin) => plugin.name), ['http', 'hello']);
      const reply = await call('GET', `${server.http}/hello?name=Ann`);
      assert.equal(reply.status, 200);
      assert.deepEqual(reply.json, { message: 'Hi, Ann (from admin)' });
    } finally {
      await server.close();
    }
  });

  it('the built announce plugin publishes through the message core\'s port: an MQTT subscriber gets the message', async () => {
    const emitted = program.emit();
    assert.equal(emitted.emitSkipped, false);
    const server = await startServer({ plugins: ['storage-lmdb', 'messaging', 'mqtt', built('announce-plugin.js')] });
    const { client } = await connectOk(brokerUrl(server), { protocolVersion: 5, clientId: 'listener', username: 'admin', password: 'ADMIN', reconnectPeriod: 0 });
    try {
      await client.subscribeAsync('announcements/#', { qos: 1 });
      const arrived = new Promise<{ topic: string; text: string; contentType?: string }>((resolve) => {
        client.once('message', (topic, payload, packet) => resolve({ topic, text: payload.toString(), contentType: packet.properties?.contentType }));
      });
      const answer = await server.engine.bus.execute<{ sequence: number }>('announce.post', { channel: 'ops', text: 'maintenance at noon' }, { principal: SYSTEM_PRINCIPAL, origin: 'test' });
      assert.ok(answer.sequence >= 1, `stored as message ${answer.sequence}`);
      assert.deepEqual(await arrived, { topic: 'announcements/ops', text: 'maintenance at noon', contentType: 'text/plain' });
    } finally {
      client.end(true);
      await server.close();
    }
  });
});
