/**
 * The `admin` api: sessions, accounts, roles. Each action runs one bus command
 * (plugins/actions/admin-commands.ts), so roles authorize them in the kernel.
 */
import type { ActionCall, ActionDefinition } from '../action-table';
import type { SessionDescription } from '../admin-commands';
import { EngineError } from '../../../kernel/errors';

/** An action that runs bus command `command` with the action's params. */
function command(action: string, name: string, summary: string): ActionDefinition {
  return {
    action,
    summary,
    handler: (call: ActionCall) => call.engine.bus.execute(name, call.params, call.ctx!),
  };
}

export const adminActions: readonly ActionDefinition[] = [
  {
    action: 'createSession',
    summary: 'log in: check username and password (or the client certificate), start a session, return its authToken',
    auth: 'none',
    params: {
      type: 'object',
      properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string' } },
    },
    async handler(call) {
      const { username, password, ...settings } = call.params as { username?: string; password?: string };
      // A verified client certificate logs in its account: a username must name it, no password is checked.
      const certified = call.socket === undefined ? undefined : call.engine.certificates.authenticate(call.socket, username);
      if (!certified && username === undefined) throw new EngineError('MISSING_PARAMETER', { param: 'username' });
      if (!certified && password === undefined) throw new EngineError('MISSING_PARAMETER', { param: 'password' });
      const principal = certified ?? await call.engine.logins.authenticate({ username: username!, password: password!, address: call.address });
      const session = await call.engine.bus.execute<SessionDescription>('session.create', settings, { principal, origin: 'actions' });
      call.responseAuthToken = session.authToken;
      return session;
    },
  },
  {
    action: 'pingSession',
    summary: 'check the server (and keep a session alive when authToken is given)',
    auth: 'optional',
    handler: (call) => (call.ctx ? call.engine.bus.execute('session.ping', {}, call.ctx) : {}),
  },
  command('alterSession', 'session.alter', 'change the session\'s defaults'),
  command('deleteSession', 'session.delete', 'log out (end the session)'),
  command('describeSessions', 'session.describe', 'describe sessions of the account'),
  command('listSessions', 'session.list', 'list sessions'),
  command('createAccount', 'account.create', 'create an account'),
  command('alterAccount', 'account.alter', 'change an account\'s password or description'),
  command('deleteAccount', 'account.delete', 'delete an account'),
  command('listAccounts', 'account.list', 'list accounts'),
  command('assignRolesToAccounts', 'account.assignRoles', 'give accounts roles'),
  command('revokeRolesFromAccounts', 'account.revokeRoles', 'take roles from accounts'),
  command('createRole', 'role.create', 'create a role'),
  command('alterRole', 'role.alter', 'change a role'),
  command('deleteRole', 'role.delete', 'delete a role'),
  command('listRoles', 'role.list', 'list roles'),
  command('backupDatabase', 'server.backup', 'write a consistent, compacted copy of the data folder into a new folder while serving (docs/operations.md)'),
];
