/**
 * The plugin API. A plugin is data plus a register function:
 *
 *   export default definePlugin({
 *     name: 'hello',
 *     dependencies: ['http'],
 *     register(engine, options) { ... },
 *   });
 *
 * `register` may be async; the engine waits for it (and names the plugin if it hangs).
 * Anything to undo goes in `engine.onClose`; plugins close in reverse load order.
 */
import type { Engine } from './engine';

export interface EnginePlugin<Options = Record<string, unknown>> {
  /** Unique name; other plugins list it in `dependencies`. */
  name: string;
  version?: string;
  description?: string;
  /** Plugins that must load before this one. */
  dependencies?: string[];
  register(engine: Engine, options: Options): void | Promise<void>;
}

export function definePlugin<Options = Record<string, unknown>>(plugin: EnginePlugin<Options>): EnginePlugin<Options> {
  return plugin;
}

export function isEnginePlugin(value: unknown): value is EnginePlugin<any> {
  return typeof value === 'object' && value !== null
    && typeof (value as EnginePlugin).name === 'string'
    && typeof (value as EnginePlugin).register === 'function';
}
