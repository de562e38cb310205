/**
 * plugins/data: the data commands every store shares (tables, indexes, records, queries, cursors,
 * transactions) over whichever plugin provides `storage`, plus the value formats, index-key
 * encoding and filter language that protocols and stores use. `rest` depends on it; the `db`
 * api of `actions` uses its commands when it is loaded.
 */
import { definePlugin } from '../../kernel/plugin';
import { registerDataCommands } from './register-data-commands';

export default definePlugin({
  name: 'data',
  description: 'data commands: tables, indexes, records, queries, cursors, transactions',
  register(engine) {
    registerDataCommands(engine);
  },
});
