/**
 * Registers every data command on the bus (docs/commands.md); the data plugin calls this at load.
 * Handlers resolve the storage port on first use, so the store may load before or after.
 */
import type { Engine } from '../../kernel/engine';
import type { StoragePort } from '../../kernel/storage/storage-port';
import { registerCursorCommands } from './cursor-commands';
import { CursorRegistry } from './cursor-registry';
import { registerDatabaseCommands } from './database-commands';
import { SESSION_OWNER, sessionOwner, type DataContext } from './data-context';
import { registerIndexCommands } from './index-commands';
import { registerQueryCommands } from './query-commands';
import { registerRecordCommands } from './record-commands';
import { registerTableCommands } from './table-commands';
import { TransactionRegistry, registerTransactionCommands } from './transaction-commands';

export function registerDataCommands(engine: Engine): DataContext {
  let storage: StoragePort | undefined;
  const getStorage = (): StoragePort => (storage ??= engine.need('storage'));
  const data: DataContext = {
    engine,
    storage: getStorage,
    // A cursor owned by an api session lives as long as that session's idleCursorTimeoutSeconds.
    cursors: new CursorRegistry(engine.idleExpiry, (owner) => {
      const sessionId = owner.startsWith(SESSION_OWNER) ? owner.slice(SESSION_OWNER.length) : undefined;
      const seconds = sessionId === undefined ? undefined : engine.apiSessions.findById(sessionId)?.settings.idleCursorTimeoutSeconds;
      return (seconds ?? engine.settings.cursor_idle_timeout_seconds) * 1000;
    }, engine.nodeIds),
    transactions: new TransactionRegistry(
      engine.idleExpiry,
      getStorage,
      () => engine.settings.transaction_idle_timeout_seconds * 1000,
      (ctx, write) => engine.authorize(ctx, write.command, write.resource),
      engine.nodeIds,
    ),
  };

  registerDatabaseCommands(data);
  registerTableCommands(data);
  registerIndexCommands(data);
  registerRecordCommands(data);
  registerQueryCommands(data);
  registerCursorCommands(data);
  registerTransactionCommands(data);

  // A session's cursors close and its transactions roll back when it ends (logout, idle expiry).
  engine.apiSessions.onEnd((session) => {
    const owner = sessionOwner(session.id);
    data.cursors.closeOwner(owner);
    data.transactions.rollbackOwner(owner);
  });
  // Registered at start so it runs first at shutdown, before the store closes.
  const release = (): void => {
    data.cursors.closeAll();
    data.transactions.rollbackAll();
  };
  engine.onStart(() => engine.onClose(release));
  return data;
}
