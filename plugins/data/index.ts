/**
 * plugins/data: the data commands every store shares (tables, indexes, records, queries, cursors,
 * transactions) over whichever plugin provides `storage`, and the `data` service
 * (data-service.ts). The value formats and the filter language it shares with protocols and
 * stores are in lib/. `rest` depends on it; the `db` api of `actions` uses its commands when it
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
