/**
 * Loads SQLite compiled to WebAssembly (`@sqlite.org/sqlite-wasm`, version pinned in
 * package.json). The package is an ES module and this project compiles to CommonJS, where tsc
 * would turn `import()` into `require()`: the import is built at run time so Node's own ESM
 * loader runs it. Loaded once per worker thread.
 */
import type { Sqlite3Static } from '@sqlite.org/sqlite-wasm';

export type Sqlite3 = Sqlite3Static;

const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ default: (options?: unknown) => Promise<Sqlite3> }>;

let loading: Promise<Sqlite3> | undefined;

export function loadSqlite(): Promise<Sqlite3> {
  loading ??= importEsm('@sqlite.org/sqlite-wasm').then(async (module) => {
    const sqlite3 = await module.default({ print: () => undefined, printErr: () => undefined });
    // Failures reach the caller as errors; the library would also print them to the console.
    const config = (sqlite3 as unknown as { config: Record<string, unknown> }).config;
    config.warn = () => undefined;
    config.log = () => undefined;
    config.error = () => undefined;
    (sqlite3.vtab.xError as { errorReporter?: unknown }).errorReporter = undefined;
    return sqlite3;
  });
  return loading;
}
