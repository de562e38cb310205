#!/usr/bin/env node
/**
 * What `npm start`, `npm test` and `npm run setup` run first: installs what is missing and skips
 * what is already done, so a fresh clone needs one command.
 *
 *   node scripts/ensure.mjs start   npm packages (when node_modules does not match the lock file), the server's build
 *   node scripts/ensure.mjs test    the same, the Debian packages the tests call (TEST_PACKAGES: strace,
 *                                   mosquitto-clients, mosquitto, nats-server, chromium), the whole build (tests included)
 *   node scripts/ensure.mjs setup   npm packages and the Debian packages, no build
 *
 * Plain Node.js with no dependencies: it runs before node_modules exists. When something cannot be
 * installed it says in one line what is missing and the command that installs it, and exits 1.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const mode = process.argv[2];
const LABEL = { start: 'npm start', test: 'npm test', setup: 'npm run setup' }[mode];
if (!LABEL) fail('usage: node scripts/ensure.mjs start|test|setup');

/** Debian packages the tests call, and the program that shows each is there. */
const TEST_PACKAGES = [
  { pkg: 'strace', present: () => onPath('strace') },
  { pkg: 'mosquitto-clients', present: () => onPath('mosquitto_pub') && onPath('mosquitto_sub') },
  // The broker itself: the MQTT benchmark's second reference.
  { pkg: 'mosquitto', present: () => onPath('mosquitto') || existsSync('/usr/sbin/mosquitto') },
  // The cluster tests run three of them (plugin cluster-nats, docs/cluster.md).
  { pkg: 'nats-server', present: () => onPath('nats-server') || existsSync('/usr/sbin/nats-server') },
  { pkg: 'chromium', present: () => existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium') },
];

/** What each build compiles (tsc projects) and the files whose content decides whether it is current. */
const BUILDS = {
  start: {
    projects: ['tsconfig.build.json', 'apps/explorer/tsconfig.json'],
    inputs: ['main.ts', 'cli', 'kernel', 'lib', 'plugins', 'examples', 'apps/explorer/src', 'tsconfig.json', 'tsconfig.build.json', 'apps/explorer/tsconfig.json', 'package-lock.json'],
  },
  test: {
    projects: ['tsconfig.json', 'apps/explorer/tsconfig.json'],
    inputs: ['main.ts', 'cli', 'kernel', 'lib', 'plugins', 'examples', 'apps/explorer/src', 'test', 'bench', 'tsconfig.json', 'apps/explorer/tsconfig.json', 'package-lock.json'],
  },
};

if (mode !== 'start') ensureDebianPackages();
ensureNpmPackages();
if (mode !== 'setup') ensureBuild(BUILDS[mode]);

function fail(message) {
  process.stderr.write(`${LABEL ?? 'ensure'}: ${message}\n`);
  process.exit(1);
}

function onPath(program) {
  return (process.env.PATH ?? '').split(delimiter).some((folder) => folder && existsSync(join(folder, program)));
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', ...options });
  return result.error === undefined && result.status === 0;
}

function ensureDebianPackages() {
  const missing = TEST_PACKAGES.filter((entry) => !entry.present()).map((entry) => entry.pkg);
  if (missing.length === 0) return;
  const install = ['install', '-y', '-qq', ...missing];
  const asRoot = process.getuid?.() === 0;
  const sudo = !asRoot && onPath('sudo') && run('sudo', ['-n', 'true'], { stdio: 'ignore' });
  const command = `${asRoot ? '' : 'sudo '}apt-get ${install.join(' ')}`;
  if (!onPath('apt-get') || (!asRoot && !sudo)) {
    fail(`the tests need the Debian packages ${missing.join(', ')}, which cannot be installed here (no apt-get, or not root and no sudo); install them with: ${command}`);
  }
  process.stderr.write(`${LABEL}: installing the Debian packages the tests call: ${missing.join(', ')}\n`);
  const prefix = asRoot ? [] : ['-n', 'env'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => (asRoot ? run('apt-get', args, { env }) : run('sudo', [...prefix, 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args]));
  if (!apt(['update', '-qq']) || !apt(install) || TEST_PACKAGES.some((entry) => missing.includes(entry.pkg) && !entry.present())) {
    fail(`could not install the Debian packages ${missing.join(', ')} (no network?); install them with: ${command}`);
  }
}

/**
 * npm ci runs unless node_modules matches the lock file: installed from this very lock file (the
 * stamp a run of this script leaves), or holding every locked package at its locked version (npm's
 * own record, node_modules/.package-lock.json, for an install made by hand).
 */
function ensureNpmPackages() {
  const lock = hashOf([join(ROOT, 'package-lock.json')]);
  const stamp = join(ROOT, 'node_modules', '.engine-lock.sha256');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock) return;
  if (installedAsLocked()) {
    writeFileSync(stamp, lock);
    return;
  }
  process.stderr.write(`${LABEL}: installing the npm packages (npm ci)\n`);
  if (!run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['ci', '--no-audit', '--no-fund'])) {
    fail('could not install the npm packages (npm ci failed: see above; no network?); install them with: npm ci');
  }
  writeFileSync(stamp, lock);
}

function installedAsLocked() {
  const readJson = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined);
  const locked = readJson(join(ROOT, 'package-lock.json'))?.packages;
  const installed = readJson(join(ROOT, 'node_modules', '.package-lock.json'))?.packages;
  if (!locked || !installed) return false;
  return Object.entries(locked).every(([path, entry]) => {
    if (path === '') return true;
    const present = installed[path];
    // Optional packages of other platforms are locked but never installed.
    return present ? present.version === entry.version : entry.optional === true;
  });
}

/** Compiles when the inputs' content differs from what the last successful build of this kind compiled. */
function ensureBuild({ projects, inputs }) {
  const files = inputs.flatMap((input) => filesUnder(join(ROOT, input)));
  const current = hashOf(files);
  const stamp = join(ROOT, 'dist', `.built-${mode}.sha256`);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === current) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const project of projects) {
    process.stderr.write(`${LABEL}: building ${project}\n`);
    if (!run(process.execPath, [tsc, '-p', project])) fail(`the build of ${project} failed (see above)`);
  }
  removeStaleOutputs();
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  writeFileSync(stamp, current);
}

/**
 * tsc never deletes: the output of a source file since removed or renamed would stay in dist (a
 * deleted test would still run). Removes what no source file under the server's folders gives.
 */
function removeStaleOutputs() {
  const dist = join(ROOT, 'dist');
  for (const folder of ['kernel', 'lib', 'plugins', 'examples', 'test', 'bench']) {
    for (const output of filesUnder(join(dist, folder))) {
      const source = /^(.*)(\.d\.ts|\.js\.map|\.js)$/.exec(relative(dist, output));
      if (source && !existsSync(join(ROOT, `${source[1]}.ts`))) rmSync(output);
    }
  }
}

function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules')
    .flatMap((entry) => filesUnder(join(path, entry.name)));
}

/** One digest of the files' names and contents, in a fixed order. */
function hashOf(files) {
  const hash = createHash('sha256');
  for (const file of [...files].sort()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}
