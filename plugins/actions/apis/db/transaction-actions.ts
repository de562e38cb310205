/** `db` actions for transactions that span several calls. */
import type { ActionDefinition } from '../../action-table';
import type { TransactionResult } from '../../../../lib/data/command-types';
import { exec, schema, type Params } from './db-call';



export const transactionActions: readonly ActionDefinition[] = [
  // transactions
  {
    action: 'createTransaction',
    params: schema({}),
    async handler(call) {
      const { transactionId } = await exec<TransactionResult>(call, 'transaction.begin', {});
      return { transactionId };
    },
  },
  {
    action: 'commitTransaction',
    params: schema({ transactionId: { type: 'string', minLength: 1 } }, ['transactionId']),
    async handler(call) {
      await exec(call, 'transaction.commit', { transactionId: (call.params as Params).transactionId });
      return {};
    },
  },
  {
    action: 'rollbackTransaction',
    params: schema({ transactionId: { type: 'string', minLength: 1 } }, ['transactionId']),
    async handler(call) {
      await exec(call, 'transaction.rollback', { transactionId: (call.params as Params).transactionId });
      return {};
    },
  },
];
