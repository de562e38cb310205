/**
 * plugins/data: the data commands every store shares (tables, indexes, records, queries, cursors,
 * transactions) over whichever plugin provides `storage`, plus the value formats, index-key
 * encoding and filter language that protocols and stores use, and the `data` service
 * (data-service.ts). `rest` depends on it; the `db` api of `actions` uses its commands when it
 * is loaded.
 */
import { definePlugin } from '../../kernel/plugin';
import { dataService } from './data-service';
import { registerDataCommands } from './register-data-commands';

export default definePlugin({
  name: 'data',
  description: 'data commands: tables, indexes, records, queries, cursors, transactions',
  register(engine) {
    engine.provide('data', dataService(registerDataCommands(engine)));
  },
});
