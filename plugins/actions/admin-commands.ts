/**
 * Bus commands of the admin api: authToken sessions, accounts, roles. Registered on engine.bus so
 * authorization happens in the kernel (roles grant these names like any other command):
 *
 *   session.create session.alter session.delete session.ping session.describe session.list
 *     (any authenticated account, for its own sessions; other accounts' sessions need a grant of
 *      the pseudo-command `session.manageAll`, which `admin` has). Sessions are shown and named by
 *      their `sessionId`; a token appears only in createSession's answer, to its creator.
 *   account.create account.alter account.delete account.list account.assignRoles account.revokeRoles
 *   role.create role.alter role.delete role.list
 *     (role-authorized; `account.alter` of one's own account needs no grant, but a password
 *      change there needs `currentPassword`)
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import { isAllowed } from '../../kernel/auth/authorize';
import type { CommandContext, ParamsSchema } from '../../kernel/bus/command';
import type { AccountInfo } from '../../kernel/auth/accounts';
import type { Grant, Role } from '../../kernel/auth/roles';
import type { ApiSession, ApiSessionSettings } from '../../kernel/sessions/api-sessions';
import { enumValue, parseResponseOptions, RESPONSE_OPTION_ENUMS } from './response-options';

export const KNOWN_APIS = ['admin', 'db', 'mq'] as const;
export const MAX_IDLE_SECONDS = 31_536_000;
/** Pseudo-command: a grant of it lets an account see and end other accounts' sessions. */
export const MANAGE_ALL_SESSIONS = 'session.manageAll';

const NAME_64 = { type: 'string', minLength: 1 } as const;
const STRING_LIST = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
/** Params naming another session: its sessionId (from listSessions), or a token the caller holds. */
const SESSION_REFERENCE = { sessionId: { type: 'string', minLength: 1 }, authToken: { type: 'string' } } as const;
const GRANTS = {
  type: 'array',
  items: {
    type: 'object',
    required: ['commands', 'resources'],
    properties: { commands: { ...STRING_LIST, minItems: 1 }, resources: { ...STRING_LIST, minItems: 1 } },
  },
} as const;

const SESSION_SETTINGS_PROPERTIES = {
  description: { type: 'string', maxLength: 1024 },
  defaultApi: { type: 'string' },
  defaultDatabaseName: NAME_64,
  defaultOwnerName: NAME_64,
  defaultBinaryFormat: { type: 'string' },
  defaultVariantFormat: { type: 'string' },
  defaultNumberFormat: { type: 'string' },
  defaultValidateMqttPayload: { type: 'boolean' },
  defaultResponseOptions: { type: ['object', 'null'] },
  idleConnectionTimeoutSeconds: { type: 'integer', minimum: 1, maximum: MAX_IDLE_SECONDS },
  idleCursorTimeoutSeconds: { type: 'integer', minimum: 1, maximum: MAX_IDLE_SECONDS },
} as const;

export type SessionSettingsInput = Partial<Record<keyof typeof SESSION_SETTINGS_PROPERTIES, unknown>>;

function checkName(value: string, param: string): string {
  if (Buffer.byteLength(value) > 64) throw new EngineError('INVALID_PARAMETER', { param, reason: 'at most 64 bytes' });
  return value;
}

/** Applies the given session settings over `base` (validated; enum values case-insensitive). */
export function sessionSettings(input: SessionSettingsInput, base: ApiSessionSettings): ApiSessionSettings {
  const settings: ApiSessionSettings = { ...base };
  if (input.description !== undefined) settings.description = input.description as string;
  if (input.defaultApi !== undefined) settings.defaultApi = enumValue(input.defaultApi, KNOWN_APIS, 'defaultApi');
  if (input.defaultDatabaseName !== undefined) settings.defaultDatabaseName = checkName(input.defaultDatabaseName as string, 'defaultDatabaseName');
  if (input.defaultOwnerName !== undefined) settings.defaultOwnerName = checkName(input.defaultOwnerName as string, 'defaultOwnerName');
  if (input.defaultBinaryFormat !== undefined) settings.defaultBinaryFormat = enumValue(input.defaultBinaryFormat, RESPONSE_OPTION_ENUMS.binaryFormat, 'defaultBinaryFormat');
  if (input.defaultVariantFormat !== undefined) settings.defaultVariantFormat = enumValue(input.defaultVariantFormat, RESPONSE_OPTION_ENUMS.variantFormat, 'defaultVariantFormat');
  if (input.defaultNumberFormat !== undefined) settings.defaultNumberFormat = enumValue(input.defaultNumberFormat, RESPONSE_OPTION_ENUMS.numberFormat, 'defaultNumberFormat');
  if (input.defaultValidateMqttPayload !== undefined) settings.defaultValidateMqttPayload = input.defaultValidateMqttPayload as boolean;
  if (input.defaultResponseOptions !== undefined) {
    const raw = (input.defaultResponseOptions ?? {}) as Record<string, unknown>;
    parseResponseOptions(raw, 'defaultResponseOptions');
    settings.defaultResponseOptions = { ...raw };
  }
  if (input.idleConnectionTimeoutSeconds !== undefined) settings.idleConnectionTimeoutSeconds = input.idleConnectionTimeoutSeconds as number;
  if (input.idleCursorTimeoutSeconds !== undefined) settings.idleCursorTimeoutSeconds = input.idleCursorTimeoutSeconds as number;
  return settings;
}

/** Session settings before createSession's params apply, from the server settings. */
export function defaultSessionSettings(engine: Engine): ApiSessionSettings {
  const s = engine.settings;
  const serverOptions = parseResponseOptions(s.default_response_options, 'default_response_options');
  return {
    description: '',
    defaultApi: 'db',
    defaultDatabaseName: s.default_database_name,
    defaultOwnerName: s.default_owner_name,
    defaultBinaryFormat: serverOptions.binaryFormat ?? s.default_binary_format,
    defaultVariantFormat: serverOptions.variantFormat ?? 'json',
    defaultNumberFormat: serverOptions.numberFormat ?? s.default_number_format,
    defaultValidateMqttPayload: s.default_validate_mqtt_payload,
    defaultResponseOptions: {},
    idleConnectionTimeoutSeconds: s.session_idle_timeout_seconds,
    idleCursorTimeoutSeconds: s.cursor_idle_timeout_seconds,
  };
}

export interface SessionSummary {
  sessionId: string;
  username: string;
  description: string;
  sessionStartTimestamp: string;
  sessionLastAccessedTimestamp: string;
  currentSession: boolean;
}

export interface SessionDescription extends ApiSessionSettings, SessionSummary {
  /** Only in createSession's answer: the token is shown once, to the client that logged in. */
  authToken?: string;
}

/** A session as listSessions shows it: never its token. */
export function summarizeSession(session: ApiSession, currentSessionId?: string): SessionSummary {
  return {
    sessionId: session.id,
    username: session.account,
    description: session.settings.description,
    sessionStartTimestamp: new Date(session.createdAt).toISOString(),
    sessionLastAccessedTimestamp: new Date(session.lastUsedAt).toISOString(),
    currentSession: session.id === currentSessionId,
  };
}

/** A session with its settings, as describeSessions and alterSession show it: never its token. */
export function describeSession(session: ApiSession, currentSessionId?: string): SessionDescription {
  return {
    sessionId: session.id,
    username: session.account,
    ...session.settings,
    defaultResponseOptions: { ...session.settings.defaultResponseOptions },
    sessionStartTimestamp: new Date(session.createdAt).toISOString(),
    sessionLastAccessedTimestamp: new Date(session.lastUsedAt).toISOString(),
    currentSession: session.id === currentSessionId,
  };
}

function mayManageAll(engine: Engine, ctx: CommandContext): boolean {
  return isAllowed(engine.roles, ctx.principal, MANAGE_ALL_SESSIONS, { kind: 'system' });
}

/** How a command names a session: by `sessionId`, by a token the caller holds, or (neither) the caller's own. */
interface SessionReference {
  sessionId?: string;
  authToken?: string;
}

/** The session a reference names, when the caller may touch it (own account, or session.manageAll). */
function sessionFor(engine: Engine, ctx: CommandContext, reference: SessionReference): ApiSession {
  if (reference.sessionId !== undefined && reference.authToken !== undefined) {
    throw new EngineError('INVALID_PARAMETER', { param: 'sessionId', reason: 'give sessionId or authToken, not both' });
  }
  let session: ApiSession | undefined;
  if (reference.sessionId !== undefined) {
    session = engine.apiSessions.findById(reference.sessionId);
    if (!session) throw new EngineError('INVALID_PARAMETER', { param: 'sessionId', reason: 'no such session' });
  } else if (reference.authToken !== undefined) {
    session = engine.apiSessions.findByToken(reference.authToken);
    if (!session) throw new EngineError('INVALID_PARAMETER', { param: 'authToken', reason: 'no such session' });
  } else {
    session = ctx.sessionId === undefined ? undefined : engine.apiSessions.findById(ctx.sessionId);
    if (!session) throw new EngineError('MISSING_PARAMETER', { param: 'sessionId' });
  }
  if (session.account !== ctx.principal.account && !mayManageAll(engine, ctx)) throw new EngineError('SESSION_NOT_OWNED');
  return session;
}

/** Checks the current password of one's own account before it changes (12025 when absent, 12033 when wrong). */
async function verifyCurrentPassword(engine: Engine, account: string, currentPassword: string | undefined): Promise<void> {
  if (currentPassword === undefined) throw new EngineError('MISSING_PARAMETER', { param: 'currentPassword' });
  // Through the login guard, so guessing the current password from a stolen session backs off too.
  await engine.logins.authenticate({ username: account, password: currentPassword });
}

function accountOut(info: AccountInfo): Record<string, unknown> {
  return { username: info.name, roles: info.roles, description: info.description ?? '', createdAt: info.createdAt, updatedAt: info.updatedAt };
}

function roleOut(role: Role): Record<string, unknown> {
  return { roleName: role.name, description: role.description ?? '', grants: role.grants, denies: role.denies ?? [], origin: role.origin ?? 'stored' };
}

function accountResource(params: { username: string }) {
  return { kind: 'account' as const, account: params.username.toLowerCase() };
}

function roleResource(params: { roleName: string }) {
  return { kind: 'role' as const, role: params.roleName.toLowerCase() };
}

function schema(properties: Record<string, unknown>, required: string[] = []): ParamsSchema {
  return { type: 'object', properties, required };
}

function accountNames(params: { usernames?: string[]; accounts?: string[] }): string[] {
  const names = params.usernames ?? params.accounts;
  if (!names) throw new EngineError('MISSING_PARAMETER', { param: 'usernames' });
  return names;
}

export function registerAdminCommands(engine: Engine): void {
  const bus = engine.bus;
  const sessions = engine.apiSessions;

  // ---------------------------------------------------------------- sessions
  bus.register<SessionSettingsInput, SessionDescription>({
    name: 'session.create',
    summary: 'start an authToken session for the authenticated account',
    access: 'authenticated',
    params: schema(SESSION_SETTINGS_PROPERTIES),
    handler(params, ctx) {
      const settings = sessionSettings(params, defaultSessionSettings(engine));
      const session = sessions.create(ctx.principal.account, settings);
      return { authToken: session.authToken, ...describeSession(session, session.id) };
    },
  });

  bus.register<SessionSettingsInput & SessionReference, SessionDescription>({
    name: 'session.alter',
    summary: 'change the settings of the current session (or another of the account; any with session.manageAll)',
    access: 'authenticated',
    params: schema({ ...SESSION_SETTINGS_PROPERTIES, ...SESSION_REFERENCE }),
    handler(params, ctx) {
      const session = sessionFor(engine, ctx, params);
      sessions.alter(session, sessionSettings(params, session.settings));
      return describeSession(session, ctx.sessionId);
    },
  });

  bus.register<SessionReference, { deleted: boolean }>({
    name: 'session.delete',
    summary: 'end the current session (or another one of the account; any with session.manageAll)',
    access: 'authenticated',
    params: schema(SESSION_REFERENCE),
    handler(params, ctx) {
      return { deleted: sessions.end(sessionFor(engine, ctx, params).authToken) };
    },
  });

  bus.register<Record<string, never>, Record<string, never>>({
    name: 'session.ping',
    summary: 'keep the session alive',
    access: 'authenticated',
    params: schema({}),
    handler: () => ({}),
  });

  bus.register<{ sessionIds?: string[]; authTokens?: string[] }, { sessions: SessionDescription[] }>({
    name: 'session.describe',
    summary: 'describe the named sessions (by sessionIds, or authTokens the caller holds), or every session of the account',
    access: 'authenticated',
    params: schema({ sessionIds: STRING_LIST, authTokens: STRING_LIST }),
    handler(params, ctx) {
      const named = [
        ...(params.sessionIds ?? []).map((sessionId) => sessionFor(engine, ctx, { sessionId })),
        ...(params.authTokens ?? []).map((authToken) => sessionFor(engine, ctx, { authToken })),
      ];
      const found = params.sessionIds || params.authTokens ? named : sessions.list(ctx.principal.account);
      return { sessions: found.map((session) => describeSession(session, ctx.sessionId)) };
    },
  });

  bus.register<Record<string, never>, { sessions: SessionSummary[] }>({
    name: 'session.list',
    summary: 'list the sessions of the account (every session with session.manageAll)',
    access: 'authenticated',
    params: schema({}),
    handler(_params, ctx) {
      const found = mayManageAll(engine, ctx) ? sessions.list() : sessions.list(ctx.principal.account);
      return { sessions: found.map((session) => summarizeSession(session, ctx.sessionId)) };
    },
  });

  // ---------------------------------------------------------------- accounts
  bus.register<{ username: string; password: string; roles?: string[]; description?: string }, unknown>({
    name: 'account.create',
    summary: 'create an account',
    params: schema({ username: NAME_64, password: { type: 'string' }, roles: STRING_LIST, description: { type: 'string', maxLength: 1024 } }, ['username', 'password']),
    resource: accountResource,
    async handler(params) {
      return accountOut(await engine.accounts.create(params.username, params.password, params.roles ?? [], params.description));
    },
  });

  bus.register<{ username: string; password?: string; currentPassword?: string; description?: string }, unknown>({
    name: 'account.alter',
    summary: 'change an account\'s password or description; a password change ends the account\'s sessions (but the caller\'s own)',
    access: 'authenticated',
    params: schema({ username: NAME_64, password: { type: 'string' }, currentPassword: { type: 'string' }, description: { type: 'string', maxLength: 1024 } }, ['username']),
    async handler(params, ctx) {
      const name = params.username.toLowerCase();
      const own = name === ctx.principal.account;
      if (!own) engine.authorize(ctx, 'account.alter', { kind: 'account', account: name });
      engine.accounts.get(name);
      if (params.password !== undefined) {
        // A stolen session must not be enough to take over its account: one's own password
        // changes only with the current one. An administrator resetting another's does not know it.
        if (own) await verifyCurrentPassword(engine, name, params.currentPassword);
        await engine.accounts.changePassword(name, params.password);
        for (const session of sessions.list(name)) if (session.id !== ctx.sessionId) sessions.end(session.authToken);
      }
      const info = params.description !== undefined ? await engine.accounts.alter(name, { description: params.description }) : engine.accounts.get(name);
      return accountOut(info);
    },
  });

  bus.register<{ username: string }, unknown>({
    name: 'account.delete',
    summary: 'delete an account and end its sessions',
    params: schema({ username: NAME_64 }, ['username']),
    resource: accountResource,
    async handler(params) {
      await engine.accounts.delete(params.username);
      sessions.endAccount(params.username.toLowerCase());
      return {};
    },
  });

  bus.register<Record<string, never>, unknown>({
    name: 'account.list',
    reads: true,
    summary: 'list accounts',
    params: schema({}),
    handler: () => ({ accounts: engine.accounts.list().map(accountOut) }),
  });

  const roleChange = (assign: boolean) => async (params: { usernames?: string[]; accounts?: string[]; roleNames: string[] }) => {
    const names = accountNames(params);
    for (const name of names) engine.accounts.get(name);
    if (assign) for (const role of params.roleNames) engine.roles.require(role);
    const accounts = [];
    for (const name of names) {
      accounts.push(assign ? await engine.accounts.assignRoles(name, params.roleNames) : await engine.accounts.revokeRoles(name, params.roleNames));
    }
    return { accounts: accounts.map(accountOut) };
  };
  const roleChangeParams = schema({ usernames: { ...STRING_LIST, minItems: 1 }, accounts: { ...STRING_LIST, minItems: 1 }, roleNames: { ...STRING_LIST, minItems: 1 } }, ['roleNames']);

  bus.register({ name: 'account.assignRoles', summary: 'give accounts roles', params: roleChangeParams, handler: roleChange(true) });
  bus.register({ name: 'account.revokeRoles', summary: 'take roles from accounts', params: roleChangeParams, handler: roleChange(false) });

  // ---------------------------------------------------------------- roles
  bus.register<{ roleName: string; description?: string; grants: Grant[]; denies?: Grant[] }, unknown>({
    name: 'role.create',
    summary: 'create a role',
    params: schema({ roleName: NAME_64, description: { type: 'string', maxLength: 1024 }, grants: GRANTS, denies: GRANTS }, ['roleName', 'grants']),
    resource: roleResource,
    async handler(params) {
      return roleOut(await engine.roles.create({ name: params.roleName, description: params.description, grants: params.grants, denies: params.denies }));
    },
  });

  bus.register<{ roleName: string; description?: string; grants?: Grant[]; denies?: Grant[] }, unknown>({
    name: 'role.alter',
    summary: 'change a stored role',
    params: schema({ roleName: NAME_64, description: { type: 'string', maxLength: 1024 }, grants: GRANTS, denies: GRANTS }, ['roleName']),
    resource: roleResource,
    async handler(params) {
      return roleOut(await engine.roles.alter(params.roleName, { description: params.description, grants: params.grants, denies: params.denies }));
    },
  });

  bus.register<{ roleName: string }, unknown>({
    name: 'role.delete',
    summary: 'delete a stored role and take it from every account',
    params: schema({ roleName: NAME_64 }, ['roleName']),
    resource: roleResource,
    async handler(params) {
      const role = engine.roles.require(params.roleName);
      await engine.roles.delete(role.name);
      for (const account of engine.accounts.list()) {
        if (account.roles.includes(role.name)) await engine.accounts.revokeRoles(account.name, [role.name]);
      }
      return {};
    },
  });

  bus.register<Record<string, never>, unknown>({
    name: 'role.list',
    reads: true,
    summary: 'list roles',
    params: schema({}),
    handler: () => ({ roles: engine.roles.list().map(roleOut) }),
  });
}
