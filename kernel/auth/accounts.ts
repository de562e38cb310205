/**
 * Accounts: case-insensitive names, scrypt hashes, roles. Persisted in the storage plugin's
 * internal store `accounts`. Hashes are made and checked by the bounded hashing pool
 * (password-hasher.ts). Verified credentials are cached briefly because scrypt on every request
 * would dominate request cost; the cache keeps a keyed digest, never the password. Protocols log
 * clients in through the login guard (login-guard.ts), which throttles failures.
 */
import { systemClock, type Clock } from '../clock';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { EngineError } from '../errors';
import type { InternalStore } from '../storage/storage-port';
import { UNKNOWN_ACCOUNT_HASH } from './password-hash';
import type { PasswordHashing } from './password-hasher';
import type { Principal } from './principal';
import type { RoleCatalog } from './roles';
import { CatalogRemovals, CatalogWrites } from './catalog-writes';

export const DEFAULT_ADMIN = 'admin';
export const DEFAULT_ADMIN_PASSWORD = 'ADMIN';

export interface AccountRecord {
  name: string;
  passwordHash: string;
  roles: string[];
  description?: string;
  createdAt: string;
  updatedAt: string;
}

export interface AccountInfo {
  name: string;
  roles: string[];
  description?: string;
  createdAt: string;
  updatedAt: string;
}

const NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** Whether `name` could name an account at all. */
export function isAccountName(name: string): boolean {
  return NAME.test(name);
}

export class Accounts {
  private readonly records = new Map<string, AccountRecord>();
  private store?: InternalStore<AccountRecord>;
  private readonly cache = new Map<string, { digest: Buffer; expiresAt: number }>();
  private readonly pepper = randomBytes(32);
  private adminDefault = false;
  /** Records this node is storing (`save`): the store's tap tells them before the write returns. */
  private readonly saving = new CatalogWrites<AccountRecord>();
  /** Accounts this node is deleting (`delete`): in memory until the store has the removal. */
  private readonly removing = new CatalogRemovals();
  private changes = 0;

  private readonly accessListeners: Array<(account: string) => void> = [];
  /** The record each principal handed out was made from (`current` compares it with the account now). */
  private readonly issued = new WeakMap<Principal, AccountRecord>();

  /** A kernel policy a new password must pass (the loopback rule), set by the engine. */
  passwordPolicy?: (account: string, password: string) => void;

  constructor(
    private readonly roles: RoleCatalog,
    private readonly cacheSeconds: number,
    private readonly hasher: PasswordHashing,
    /** The engine's clock: verified credentials expire on it like everything else. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Loads the stored accounts; a fresh store gets `admin` with ENGINE_ADMIN_PASSWORD or ADMIN. */
  async open(store: InternalStore<AccountRecord> | undefined, initialAdminPassword: string | undefined): Promise<void> {
    this.store = store;
    if (store) for (const [key, record] of store.entries()) this.records.set(key, record);
    if (!this.records.has(DEFAULT_ADMIN)) {
      await this.create(DEFAULT_ADMIN, initialAdminPassword || DEFAULT_ADMIN_PASSWORD, ['admin'], 'built-in administrator');
    }
    this.adminDefault = await this.hasher.verify(DEFAULT_ADMIN_PASSWORD, this.records.get(DEFAULT_ADMIN)!.passwordHash);
  }

  /**
   * An account stored or removed by the store itself: a write made through another node of a
   * cluster, applied here from the replicated log (the engine taps the store's entries). A
   * verified password of it is forgotten, so a password changed elsewhere stops working here too.
   */
  storedElsewhere(key: string, record: AccountRecord | undefined): { passwordChangedOrRemoved: boolean } {
    this.removing.told(key);
    const before = this.records.get(key);
    const unchanged = { passwordChangedOrRemoved: false };
    // This node's own write, told by the store before `save` sees it stored (and a later entry
    // for the key keeps `save` from putting its record back over it).
    if (this.saving.told(key, record)) return unchanged;
    if (record === undefined ? before === undefined : before === record) return unchanged;
    if (record === undefined) this.records.delete(key);
    else this.records.set(key, record);
    this.cache.delete(key);
    this.changes++;
    if (key === DEFAULT_ADMIN && record !== undefined) {
      void this.hasher.verify(DEFAULT_ADMIN_PASSWORD, record.passwordHash).then((isDefault) => { this.adminDefault = isDefault; }, () => undefined);
    }
    this.accessMayHaveChanged(before, record);
    return { passwordChangedOrRemoved: before !== undefined && (record === undefined || record.passwordHash !== before.passwordHash) };
  }

  /**
   * Called with an account's name when what it may do changed: deleted, its roles or its
   * password changed (here or, in a cluster, through another node). Live connections that logged
   * in as it hold the principal of their login: the engine closes them (kernel/engine.ts).
   */
  onAccessChange(listener: (account: string) => void): void {
    this.accessListeners.push(listener);
  }

  private accessMayHaveChanged(before: AccountRecord | undefined, after: AccountRecord | undefined): void {
    if (before === undefined) return;
    if (after !== undefined && after.passwordHash === before.passwordHash && sameRoles(after.roles, before.roles)) return;
    for (const listener of this.accessListeners) listener(before.name);
  }

  /** Grows with every change to any account: callers that memoize a principal compare it. */
  get version(): number {
    return this.changes;
  }

  /** true while `admin` still has the well-known password (the server then stays on loopback). */
  get adminHasDefaultPassword(): boolean {
    return this.adminDefault;
  }

  /**
   * The principal of a recently verified name and password, without running scrypt: undefined
   * when the pair is not in the cache (then ask the login guard). Synchronous, for hot paths.
   */
  cachedPrincipal(name: string, password: string): Principal | undefined {
    const key = name.toLowerCase();
    const cached = this.cache.get(key);
    if (!cached || cached.expiresAt <= this.clock.now()) return undefined;
    const record = this.records.get(key);
    if (!record || !timingSafeEqual(cached.digest, this.digest(key, password))) return undefined;
    return this.principalOf(record);
  }

  /**
   * Checks a name and password; throws BAD_CREDENTIALS. An unknown name is checked against a
   * hash nobody matches, so it costs what a wrong password costs. Not throttled: protocols go
   * through the login guard.
   */
  async verifyCredentials(name: string, password: string): Promise<Principal> {
    const cached = this.cachedPrincipal(name, password);
    if (cached) return cached;
    const key = name.toLowerCase();
    const record = this.records.get(key);
    // No password is longer than MAX_PASSWORD_LENGTH; a longer one costs one ordinary check too.
    const candidate = record && password.length <= MAX_PASSWORD_LENGTH ? record : undefined;
    const matches = await this.hasher.verify(password.slice(0, MAX_PASSWORD_LENGTH), candidate?.passwordHash ?? UNKNOWN_ACCOUNT_HASH);
    if (!candidate || !matches) throw new EngineError('BAD_CREDENTIALS');
    // Deleted, or given another password, while the hash was checked: this login checked the old one.
    const now = this.records.get(key);
    if (now === undefined || now.passwordHash !== candidate.passwordHash) throw new EngineError('BAD_CREDENTIALS');
    if (this.cacheSeconds > 0) this.cache.set(key, { digest: this.digest(key, password), expiresAt: this.clock.now() + this.cacheSeconds * 1000 });
    return this.principalOf(now);
  }

  /**
   * A principal handed out by a login, as its account is now: the same one while the account's
   * password and roles are unchanged, a new one when only its roles changed, undefined when the
   * account was deleted or its password changed since (the login no longer holds). A protocol
   * whose login waits before the connection counts as live (an MQTT CONNECT's claim through a
   * cluster's stream) asks this first: an account change meanwhile closed no connection of it.
   * A principal that is not an account's (anonymous) is returned as it is.
   */
  current(principal: Principal): Principal | undefined {
    const loggedIn = this.issued.get(principal);
    if (loggedIn === undefined) return principal;
    const now = this.records.get(loggedIn.name);
    if (now === undefined || now.passwordHash !== loggedIn.passwordHash) return undefined;
    return sameRoles(now.roles, loggedIn.roles) ? principal : this.principalOf(now);
  }

  private digest(key: string, password: string): Buffer {
    return createHmac('sha256', this.pepper).update(key).update('\0').update(password).digest();
  }

  /** The current principal of an account (roles read now, so role changes apply at once). */
  principal(name: string): Principal {
    const record = this.records.get(name.toLowerCase());
    if (!record) throw new EngineError('ACCOUNT_NOT_FOUND', { account: name });
    return this.principalOf(record);
  }

  /**
   * What the account is now, to compare with a later look (the login guard's catch-up): another
   * value once it is created, altered or deleted. Opaque; never hand it out.
   */
  recordOf(name: string): object | undefined {
    return this.records.get(name.toLowerCase());
  }

  has(name: string): boolean {
    return this.records.has(name.toLowerCase());
  }

  get(name: string): AccountInfo {
    const record = this.records.get(name.toLowerCase());
    if (!record) throw new EngineError('ACCOUNT_NOT_FOUND', { account: name });
    return info(record);
  }

  list(): AccountInfo[] {
    return [...this.records.values()].map(info);
  }

  async create(name: string, password: string, roles: string[] = [], description?: string): Promise<AccountInfo> {
    if (!NAME.test(name)) throw new EngineError('INVALID_PARAMETER', { param: 'username', reason: 'use 1-64 letters, digits, _ . @ -' });
    const key = name.toLowerCase();
    if (this.records.has(key)) throw new EngineError('ACCOUNT_EXISTS', { account: key });
    checkPassword(password);
    const roleNames = roles.map((role) => this.roles.require(role).name);
    const now = new Date(this.clock.now()).toISOString();
    const record: AccountRecord = { name: key, passwordHash: await this.hasher.hash(password), roles: unique(roleNames), description, createdAt: now, updatedAt: now };
    await this.save(record);
    return info(record);
  }

  async changePassword(name: string, password: string): Promise<void> {
    const record = this.require(name);
    checkPassword(password);
    this.passwordPolicy?.(record.name, password);
    await this.save({ ...record, passwordHash: await this.hasher.hash(password), updatedAt: new Date(this.clock.now()).toISOString() });
    this.cache.delete(record.name);
    if (record.name === DEFAULT_ADMIN) this.adminDefault = password === DEFAULT_ADMIN_PASSWORD;
  }

  async alter(name: string, change: { description?: string }): Promise<AccountInfo> {
    const record = this.require(name);
    const altered = { ...record, ...change, updatedAt: new Date(this.clock.now()).toISOString() };
    await this.save(altered);
    return info(altered);
  }

  async delete(name: string): Promise<void> {
    const record = this.require(name);
    if (record.name === DEFAULT_ADMIN) throw new EngineError('INVALID_PARAMETER', { param: 'username', reason: 'the admin account cannot be deleted' });
    // Told by the store's tap (storedElsewhere followed it), or else removed here (catalog-writes.ts).
    if (await this.removing.remove(record.name, () => this.store?.remove(record.name))) return;
    if (!this.records.delete(record.name)) return;
    this.cache.delete(record.name);
    this.changes++;
    this.accessMayHaveChanged(record, undefined);
  }

  async assignRoles(name: string, roles: string[]): Promise<AccountInfo> {
    const record = this.require(name);
    const added = roles.map((role) => this.roles.require(role).name);
    const altered = { ...record, roles: unique([...record.roles, ...added]), updatedAt: new Date(this.clock.now()).toISOString() };
    await this.save(altered);
    return info(altered);
  }

  async revokeRoles(name: string, roles: string[]): Promise<AccountInfo> {
    const record = this.require(name);
    const removed = new Set(roles.map((role) => role.toLowerCase()));
    const altered = { ...record, roles: record.roles.filter((role) => !removed.has(role)), updatedAt: new Date(this.clock.now()).toISOString() };
    await this.save(altered);
    return info(altered);
  }

  private require(name: string): AccountRecord {
    const record = this.records.get(name.toLowerCase());
    if (!record) throw new EngineError('ACCOUNT_NOT_FOUND', { account: name });
    return record;
  }

  private async save(record: AccountRecord): Promise<void> {
    // Not the latest any more: an entry for the account told after this one (deleted meanwhile) holds.
    if (!await this.saving.write(record.name, record, () => this.store?.put(record.name, record))) return;
    const before = this.records.get(record.name);
    this.records.set(record.name, record);
    this.changes++;
    this.accessMayHaveChanged(before, record);
  }

  private principalOf(record: AccountRecord): Principal {
    const principal: Principal = { account: record.name, roles: record.roles };
    this.issued.set(principal, record);
    return principal;
  }
}

const MAX_PASSWORD_LENGTH = 1024;

function checkPassword(password: string): void {
  if (typeof password !== 'string' || password.length === 0 || password.length > MAX_PASSWORD_LENGTH) {
    throw new EngineError('INVALID_PARAMETER', { param: 'password', reason: `a password has 1 to ${MAX_PASSWORD_LENGTH} characters` });
  }
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((role) => b.includes(role));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function info(record: AccountRecord): AccountInfo {
  return { name: record.name, roles: [...record.roles], description: record.description, createdAt: record.createdAt, updatedAt: record.updatedAt };
}
