/**
 * The kernel instance every plugin receives: settings, logger, command bus, accounts and roles,
 * sessions, and the services plugins provide to each other. Plugins load through avvio.
 */
import avvio from 'avvio';
import pino, { type Logger } from 'pino';
import { EngineError } from './errors';
import { CommandBus } from './bus/command-bus';
import type { CommandContext, Resource } from './bus/command';
import { Accounts, type AccountRecord } from './auth/accounts';
import { authorize, isAllowed, isDenied } from './auth/authorize';
import { LoginGuard } from './auth/login-guard';
import { LoginCatchUp } from './auth/login-catch-up';
import { CertificateLogins } from './auth/certificate-login';
import { LoginThrottle } from './auth/login-throttle';
import { LoopbackRule } from './auth/loopback-rule';
import { PasswordHasher } from './auth/password-hasher';
import { ResourceAliases } from './auth/resource-aliases';
import { topicTableAliases } from './auth/topic-table-aliases';
import { RoleCatalog, type Role } from './auth/roles';
import { systemClock, type Clock } from './clock';
import { IdleExpiry } from './idle-expiry';
import { MetricsRegistry } from './metrics';
import { Readiness } from './readiness';
import { ApiSessions } from './sessions/api-sessions';
import type { Principal } from './auth/principal';
import { NodeBoundIds } from './node-bound';
import { ClientConnections } from './sessions/client-connections';
import type { EngineServices } from './services';
import type { EnginePlugin } from './plugin';
import type { Settings } from './settings';
import { PluginError, findPlugin, orderPlugins } from './load-plugins';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const packageJson = require('../../package.json') as { name: string; version: string };

export interface EngineOptions {
  settings: Settings;
  /** Where ENGINE_ADMIN_PASSWORD is read from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Plugins given as objects instead of names (embedding, tests); loaded after `settings.plugins`. */
  extraPlugins?: EnginePlugin<any>[];
  /** The clock idle expiry reads (default: the system clock; tests inject one they advance). */
  clock?: Clock;
}

export interface LoadedPlugin {
  name: string;
  version?: string;
}

type Hook = () => void | Promise<void>;

const kPluginMeta = Symbol.for('plugin-meta');

export class Engine {
  readonly name = packageJson.name;
  readonly version = packageJson.version;
  readonly settings: Readonly<Settings>;
  readonly log: Logger;
  readonly roles: RoleCatalog;
  /** Other names of resources (a topic's integration table), which the decision checks too. */
  readonly resourceAliases = new ResourceAliases();
  readonly accounts: Accounts;
  /** The bounded pool every password hash and check runs in. */
  readonly passwordHasher: PasswordHasher;
  /** How protocols log a client in with a name and password (throttled; kernel/auth/login-guard.ts). */
  readonly logins: LoginGuard;
  /** How protocols log a client in with a TLS client certificate (kernel/auth/certificate-login.ts). */
  readonly certificates: CertificateLogins;
  readonly bus: CommandBus;
  /** Idle expiry of sessions, cursors and transactions, on the engine's one clock. */
  readonly idleExpiry: IdleExpiry;
  readonly apiSessions: ApiSessions;
  /** Ids of node-bound state (transactions, cursors, action sessions) carry the node's name in a cluster. */
  readonly nodeIds: NodeBoundIds;
  /** The live connection holding each client name (the sessions are the message core's). */
  readonly clientConnections = new ClientConnections();
  readonly plugins: LoadedPlugin[] = [];
  /** The engine's one clock: idle expiry and login backoff read it (tests inject one). */
  readonly clock: Clock;
  /** Figures read at scrape time and latency histograms (kernel/metrics.ts); the metrics plugin serves them. */
  readonly metrics = new MetricsRegistry();
  /** Whether to send this server work (GET /health/ready): started, not stopping, every plugin's check holding. */
  readonly readiness = new Readiness();

  private readonly loopbackRule: LoopbackRule;
  private readonly services = new Map<string, unknown>();
  private readonly startHooks: Hook[] = [];
  private readonly closeHooks: Hook[] = [];
  private readonly drainHooks: Hook[] = [];
  private readonly env: NodeJS.ProcessEnv;
  private closing?: Promise<void>;

  private constructor(private readonly options: EngineOptions) {
    this.settings = options.settings;
    this.env = options.env ?? process.env;
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? pino({ name: 'engine', level: options.settings.log_level });
    this.roles = new RoleCatalog(options.settings.roles);
    this.passwordHasher = new PasswordHasher(options.settings.password_hash_workers);
    this.accounts = new Accounts(this.roles, options.settings.credential_cache_seconds, this.passwordHasher, this.clock);
    this.logins = new LoginGuard(this.accounts, new LoginThrottle({
      threshold: options.settings.login_failures_before_backoff,
      maxSeconds: options.settings.login_backoff_max_seconds,
      clock: this.clock,
    }), options.settings.login_shared_addresses, new LoginCatchUp(() => this.bus.replicaCatchUp, options.settings.cluster_request_timeout_ms));
    this.certificates = new CertificateLogins(this.accounts, options.settings.tls_client_certificates, options.settings.tls_certificate_account_field, this.log.child({ component: 'client-certificates' }));
    this.loopbackRule = new LoopbackRule(options.settings.listening_host);
    this.accounts.passwordPolicy = (account, password) => {
      const warning = this.loopbackRule.checkPasswordChange(account, password);
      if (warning) this.log.warn(warning);
    };
    this.bus = new CommandBus((ctx, command, resource) => this.authorize(ctx, command, resource));
    this.metrics.add({
      name: 'engine_login_failures_total',
      help: 'Logins refused: a wrong account name or password (bad_credentials), or refused while backing off after failures (throttled)',
      kind: 'counter',
      labelNames: ['reason'],
      read: () => [
        { labels: { reason: 'bad_credentials' }, value: this.logins.failures.badCredentials },
        { labels: { reason: 'throttled' }, value: this.logins.failures.throttled },
      ],
    });
    this.idleExpiry = new IdleExpiry(this.clock);
    this.nodeIds = new NodeBoundIds(options.settings.cluster_node_name ?? null);
    this.apiSessions = new ApiSessions(this.idleExpiry, {
      maxIdleSeconds: options.settings.session_max_idle_timeout_seconds,
      maxLifetimeSeconds: options.settings.session_max_lifetime_seconds,
    }, this.nodeIds);
  }

  /** Loads the plugins, opens the kernel catalogs, runs start hooks (listeners open). */
  static async start(options: EngineOptions): Promise<Engine> {
    const engine = new Engine(options);
    try {
      await engine.boot();
    } catch (error) {
      await engine.close().catch(() => undefined);
      throw error;
    }
    return engine;
  }

  /** Makes a service available to other plugins (`storage`, `http`, …). */
  provide<K extends keyof EngineServices>(name: K, service: EngineServices[K]): void;
  provide(name: string, service: unknown): void;
  provide(name: string, service: unknown): void {
    if (this.services.has(name)) throw new PluginError(`service "${name}" is provided twice`);
    this.services.set(name, service);
  }

  /** A service another plugin provides; throws when no loaded plugin provides it. */
  need<K extends keyof EngineServices>(name: K): EngineServices[K];
  need<T>(name: string): T;
  need(name: string): unknown {
    const service = this.services.get(name);
    if (service === undefined) {
      throw new EngineError('NOT_AVAILABLE', { feature: `service "${name}"`, reason: 'no loaded plugin provides it' });
    }
    return service;
  }

  has(name: string): boolean {
    return this.services.has(name);
  }

  /** Runs after every plugin has registered, in load order (listeners open here). */
  onStart(hook: Hook): void {
    this.startHooks.push(hook);
  }

  /** Runs at shutdown, in reverse registration order (after every drain hook finished). */
  onClose(hook: Hook): void {
    this.closeHooks.push(hook);
  }

  /**
   * Runs first at shutdown, every plugin's at once: stop accepting (listeners close, readiness
   * turns false), then answer the work already taken (requests in flight, publishes being
   * stored) and end long-lived streams and connections cleanly. Close hooks run after all of them.
   */
  onDrain(hook: Hook): void {
    this.drainHooks.push(hook);
  }

  /**
   * The host every listener binds to (kernel/auth/loopback-rule.ts): loopback while `admin` had
   * the default password at start, unless `listening_host` is set. Decided before start hooks run.
   */
  get listenHost(): string {
    return this.loopbackRule.host;
  }

  /** The one authorization decision (kernel/auth/authorize.ts); throws NOT_AUTHORIZED. */
  authorize(ctx: CommandContext, command: string, resource: Resource): void {
    authorize(this.roles, ctx.principal, command, resource, this.resourceAliases);
  }

  private closeConnectionsOf(holds: (principal: Principal) => boolean): void {
    // After the write that changed it is applied (a store's tap may be telling it now): closing
    // a connection can publish its will, a write of its own.
    setImmediate(() => {
      for (const connection of this.clientConnections.all()) {
        if (connection.principal !== undefined && holds(connection.principal)) connection.disconnect();
      }
    });
  }

  /** The same decision as a boolean, for filtering lists (no error built per refused item). */
  allows(ctx: CommandContext, command: string, resource: Resource): boolean {
    return isAllowed(this.roles, ctx.principal, command, resource, this.resourceAliases);
  }

  /**
   * Whether a listing granted on a container (a database's tables) leaves this item out: a role
   * denies `command` on it, or its other name may not be used so (kernel/auth/authorize.ts isDenied).
   */
  hides(ctx: CommandContext, command: string, resource: Resource): boolean {
    return isDenied(this.roles, ctx.principal, command, resource, this.resourceAliases);
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.readiness.stopping();
      await Promise.all(this.drainHooks.map(async (hook) => {
        try {
          await hook();
        } catch (error) {
          this.log.error({ err: error }, 'error while draining');
        }
      }));
      this.drainHooks.length = 0;
      this.idleExpiry.close();
      this.apiSessions.close();
      for (const hook of [...this.closeHooks].reverse()) {
        try {
          await hook();
        } catch (error) {
          this.log.error({ err: error }, 'error while closing');
        }
      }
      this.closeHooks.length = 0;
      await this.passwordHasher.close();
    })();
    return this.closing;
  }

  private async boot(): Promise<void> {
    const named = this.settings.plugins.map((reference) => findPlugin(reference));
    const plugins = orderPlugins([...named, ...(this.options.extraPlugins ?? [])]);
    const boot = avvio(undefined, { autostart: false, timeout: this.settings.plugin_timeout_ms });
    for (const plugin of plugins) {
      const options = this.settings.plugin_options[plugin.name] ?? {};
      const register = async (): Promise<void> => {
        await plugin.register(this, options);
        this.plugins.push({ name: plugin.name, version: plugin.version });
        this.log.debug({ plugin: plugin.name }, 'plugin loaded');
      };
      Object.defineProperty(register, kPluginMeta, { value: { name: plugin.name } });
      boot.use(register);
    }
    try {
      await boot.ready();
    } catch (error) {
      const err = error as Error & { code?: string };
      if (err.code === 'AVV_ERR_PLUGIN_EXEC_TIMEOUT') {
        const stuck = /'([^']+)'/.exec(err.message)?.[1] ?? 'unknown';
        throw new PluginError(`plugin "${stuck}" did not finish starting within ${this.settings.plugin_timeout_ms} ms`);
      }
      throw error instanceof PluginError ? error : new PluginError(`a plugin failed to start: ${err.message}`);
    }
    await this.openCatalogs();
    const decision = this.loopbackRule.decide(this.accounts.adminHasDefaultPassword);
    if (decision.warning) this.log.warn(decision.warning);
    for (const hook of this.startHooks) await hook();
    this.readiness.started();
  }

  private async openCatalogs(): Promise<void> {
    const storage = this.services.has('storage') ? this.need('storage') : undefined;
    if (!storage) this.log.warn('no storage plugin is loaded: accounts and roles live in memory only');
    // A topic's integration table and the topic are one resource to the decision (docs/roles.md).
    if (storage) this.resourceAliases.register(topicTableAliases(storage));
    // Accounts and roles written through another node of a cluster reach this one as applied
    // store entries: the catalogs follow them (tapped before they are read, so none is missed).
    storage?.operations.tap((entry) => {
      if (entry.op !== 'internal.put' && entry.op !== 'internal.remove') return;
      const value = entry.op === 'internal.put' ? entry.value : undefined;
      if (entry.store === 'accounts') {
        // As where it was written: a password changed or an account removed ends its action sessions.
        if (this.accounts.storedElsewhere(entry.key, value as AccountRecord | undefined).passwordChangedOrRemoved) this.apiSessions.endAccount(entry.key);
      }
      else if (entry.store === 'roles') this.roles.storedElsewhere(entry.key, value as Role | undefined);
    });
    this.roles.open(storage?.internal<Role>('roles') ?? memoryStore());
    await this.accounts.open(storage?.internal<AccountRecord>('accounts'), this.env.ENGINE_ADMIN_PASSWORD);
    this.roles.onChange(() => this.log.info('roles changed'));
    // A live connection holds the principal of its login (its account and role names; what a role
    // grants is read at each decision): one whose account was deleted, or whose password or roles
    // changed, is closed (MQTT 5: DISCONNECT 0x98), and the client logs in again as it now is.
    this.accounts.onAccessChange((account) => this.closeConnectionsOf((principal) => principal.account === account));
  }
}

function memoryStore<V>(): import('./storage/storage-port').InternalStore<V> {
  const map = new Map<string, V>();
  return {
    get: (key) => map.get(key),
    put: async (key, value) => { map.set(key, value); },
    remove: async (key) => map.delete(key),
    entries: () => map.entries(),
  };
}
