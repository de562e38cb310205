/**
 * The one table mapping (api, action) to its definition, and the dispatcher that runs an envelope
 * through it: resolve api → look up → session → params schema → responseOptions → handler.
 */
import type { Engine } from '../../kernel/engine';
import { EngineError } from '../../kernel/errors';
import type { CommandContext, ParamsSchema } from '../../kernel/bus/command';
import { lazyValidator, paramsError, type ValidateFunction } from '../../kernel/schema-validator';
import type { ApiSession } from '../../kernel/sessions/api-sessions';
import type { Envelope } from './envelope';
import { parseResponseOptions, resolveResponseOptions, type ResolvedResponseOptions } from './response-options';
import { defaultSessionSettings } from './admin-commands';

export interface ActionCall {
  engine: Engine;
  envelope: Envelope;
  /** Params after schema validation (defaults filled in). */
  params: Record<string, any>;
  /**
   * The caller's session; undefined only for `auth: 'none'` actions. A request logged in by its
   * client certificate without an authToken gets a session of its own, with the server's defaults,
   * that lives for this request only (no token, no id: `ctx.sessionId` is unset).
   */
  session?: ApiSession;
  /** Principal, origin `actions` and the session id, for bus commands. */
  ctx?: CommandContext;
  options: ResolvedResponseOptions;
  /** Set by an action that changes which token the response carries (createSession, deleteSession). */
  responseAuthToken?: string;
  /** The client's address (the TCP peer), for the login guard. */
  address?: string;
  /** The client's socket: a TLS one may carry a client certificate (kernel `engine.certificates`). */
  socket?: unknown;
}

export interface ActionDefinition {
  action: string;
  summary?: string;
  /** 'session' (default): a valid authToken is required; 'optional': used when given; 'none': ignored. */
  auth?: 'session' | 'optional' | 'none';
  /** JSON schema of `params`, compiled once. */
  params?: ParamsSchema;
  handler(call: ActionCall): unknown;
}

interface TableEntry {
  api: string;
  definition: ActionDefinition;
  validate?: ValidateFunction;
}

export class ActionTable {
  private readonly entries = new Map<string, TableEntry>();
  private readonly apiNames = new Set<string>();

  constructor(apis: Record<string, readonly ActionDefinition[]>) {
    for (const [api, definitions] of Object.entries(apis)) {
      this.apiNames.add(api);
      for (const definition of definitions) {
        // Action names match without regard to case, as the product's do (getRecordsUsingSQL).
        const key = `${api}/${definition.action.toLowerCase()}`;
        if (this.entries.has(key)) throw new Error(`action "${definition.action}" of api "${api}" is defined twice`);
        this.entries.set(key, { api, definition, validate: definition.params ? lazyValidator(definition.params, `action "${definition.action}" of api "${api}"`) : undefined });
      }
    }
  }

  /**
   * The labels an envelope is counted under (metrics): its api and action when the table knows
   * them, `unknown` otherwise (a client's made-up names never become series), '' for an api left
   * to its default.
   */
  metricLabels(api: string | undefined, action: string | undefined): [string, string] {
    const apiLabel = api === undefined ? '' : this.apiNames.has(api) ? api : 'unknown';
    const known = action !== undefined && (this.actionNames ??= new Set([...this.entries.values()].map((entry) => entry.definition.action))).has(action);
    return [apiLabel, known ? action : 'unknown'];
  }

  private actionNames?: Set<string>;

  get apis(): string[] {
    return [...this.apiNames];
  }

  lookup(api: string, action: string): TableEntry | undefined {
    return this.entries.get(`${api}/${action.toLowerCase()}`);
  }

  /** The api of an action that needs no session, when exactly one api defines it (createSession, pingSession). */
  sessionlessApiOf(action: string): string | undefined {
    const found = [...this.entries.values()].filter((entry) => entry.definition.action.toLowerCase() === action.toLowerCase() && (entry.definition.auth ?? 'session') !== 'session');
    return found.length === 1 ? found[0].api : undefined;
  }

  list(): Array<{ api: string; action: string; summary?: string }> {
    return [...this.entries.values()].map((entry) => ({ api: entry.api, action: entry.definition.action, summary: entry.definition.summary }));
  }

  /**
   * Runs one envelope. Returns the result and the token the response carries. Throws EngineError;
   * `onSession` is told the session as soon as it is known (so error responses can carry its token).
   */
  async run(engine: Engine, envelope: Envelope, onSession: (session: ApiSession | undefined, options?: ResolvedResponseOptions) => void, address?: string, socket?: unknown): Promise<{ result: unknown; authToken?: string; options: ResolvedResponseOptions }> {
    // The session is looked up first when a token is given: `api` may default to its defaultApi.
    let session: ApiSession | undefined;
    let sessionError: EngineError | undefined;
    if (envelope.authToken !== undefined) {
      try {
        session = engine.apiSessions.use(envelope.authToken);
      } catch (error) {
        sessionError = error as EngineError;
      }
    }
    const api = envelope.api ?? session?.settings.defaultApi ?? this.sessionlessApiOf(envelope.action) ?? 'db';
    const entry = this.lookup(api, envelope.action);
    if (!entry) {
      if (sessionError && !envelope.api) throw sessionError;
      throw new EngineError('UNKNOWN_ACTION', { action: envelope.action, api });
    }
    const auth = entry.definition.auth ?? 'session';
    if (auth === 'none') session = undefined;
    else if (sessionError && auth === 'session') throw sessionError;
    else if (sessionError && auth === 'optional') throw sessionError;
    // A verified client certificate logs the request in; a token's session must be of its account.
    const certified = auth === 'none' || socket === undefined ? undefined : engine.certificates.authenticate(socket, session?.account);
    if (!session && !certified && auth === 'session') throw new EngineError('INVALID_TOKEN');

    let ctx: CommandContext | undefined;
    let callSession = session;
    if (session) {
      let principal;
      try {
        principal = engine.accounts.principal(session.account);
      } catch {
        engine.apiSessions.end(session.authToken);
        throw new EngineError('INVALID_TOKEN');
      }
      ctx = { principal, origin: 'actions', sessionId: session.id };
    } else if (certified) {
      ctx = { principal: certified, origin: 'actions' };
      callSession = requestSession(engine, certified.account);
    }
    onSession(session);

    const requestOptions = parseResponseOptions(envelope.responseOptions);
    const options = resolveResponseOptions(requestOptions, session?.settings, engine.settings);
    onSession(session, options);

    const params = envelope.params;
    if (entry.validate && !entry.validate(params)) throw paramsError(entry.validate.errors);
    const call: ActionCall = { engine, envelope, params, session: callSession, ctx, options, address, socket };
    const result = await entry.definition.handler(call);
    return { result, authToken: call.responseAuthToken ?? session?.authToken, options };
  }
}

/** The session of one request logged in by its client certificate without a token (see ActionCall.session). */
function requestSession(engine: Engine, account: string): ApiSession {
  const now = engine.clock.now();
  return { authToken: '', id: '', account, createdAt: now, lastUsedAt: now, settings: defaultSessionSettings(engine) };
}
