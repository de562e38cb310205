/**
 * Finds the plugins named by the `plugins` setting and orders them by their dependencies.
 * Built-in names load from plugins/<name>; a name starting with `.` or `/` is a path (relative to
 * the working directory); anything else is a package name.
 */
import { resolve } from 'node:path';
import { isEnginePlugin, type EnginePlugin } from './plugin';

export class PluginError extends Error {
  override readonly name = 'PluginError';
}

export const BUILTIN_PLUGINS: Readonly<Record<string, string>> = Object.freeze({
  'storage-lmdb': '../plugins/storage-lmdb',
  data: '../plugins/data',
  http: '../plugins/http',
  rest: '../plugins/rest',
  actions: '../plugins/actions',
  mqtt: '../plugins/mqtt',
  messaging: '../plugins/messaging',
  explorer: '../plugins/explorer',
  metrics: '../plugins/metrics',
  sql: '../plugins/sql',
  'cluster-nats': '../plugins/cluster-nats',
});

export function findPlugin(reference: string, cwd = process.cwd()): EnginePlugin<any> {
  const builtin = BUILTIN_PLUGINS[reference];
  const target = builtin ?? (reference.startsWith('.') || reference.startsWith('/') ? resolve(cwd, reference) : reference);
  let loaded: unknown;
  try {
    loaded = require(builtin ? require.resolve(builtin) : target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(builtin ?? target)) {
      throw new PluginError(`unknown plugin "${reference}": no built-in plugin, file or package has that name`);
    }
    throw new PluginError(`plugin "${reference}" failed to load: ${(error as Error).message}`);
  }
  const candidate = (loaded as { default?: unknown }).default ?? loaded;
  if (!isEnginePlugin(candidate)) {
    throw new PluginError(`"${reference}" is not an engine plugin: export definePlugin({ name, register }) as default`);
  }
  return candidate;
}

/** Orders plugins so each follows its dependencies (keeping the list order otherwise). */
export function orderPlugins(plugins: EnginePlugin<any>[]): EnginePlugin<any>[] {
  const byName = new Map<string, EnginePlugin<any>>();
  for (const plugin of plugins) {
    if (byName.has(plugin.name)) throw new PluginError(`plugin "${plugin.name}" is listed twice`);
    byName.set(plugin.name, plugin);
  }
  const ordered: EnginePlugin<any>[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (plugin: EnginePlugin<any>, chain: string[]): void => {
    const seen = state.get(plugin.name);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new PluginError(`plugins depend on each other in a cycle: ${[...chain, plugin.name].join(' → ')}`);
    state.set(plugin.name, 'visiting');
    for (const dependency of plugin.dependencies ?? []) {
      const needed = byName.get(dependency);
      if (!needed) throw new PluginError(`plugin "${plugin.name}" needs plugin "${dependency}", which is not in the plugins setting`);
      visit(needed, [...chain, plugin.name]);
    }
    state.set(plugin.name, 'done');
    ordered.push(plugin);
  };
  for (const plugin of plugins) visit(plugin, []);
  return ordered;
}
