/**
 * Roles grant command patterns on resource patterns (docs/roles.md). Built-in roles and roles
 * declared in the settings are fixed; roles made through the admin api are stored.
 */
import { EngineError } from '../errors';
import type { InternalStore } from '../storage/storage-port';
import type { RoleSetting } from '../settings';
import { CatalogRemovals, CatalogWrites } from './catalog-writes';

export interface Grant {
  /** Command names or globs: `record.find`, `record.*`, `*.list`, `*`. */
  commands: string[];
  /** Resource patterns: `*`, `table:main/*`, `database:main`, `topic:sensors/#`, `client:dev-*`. */
  resources: string[];
}

export interface Role {
  name: string;
  description?: string;
  grants: Grant[];
  /** Denies win over grants of every role the account holds. */
  denies?: Grant[];
  /** Where it comes from: built in, the settings file, or the admin api. */
  origin?: 'builtin' | 'settings' | 'stored';
}

export const BUILTIN_ROLES: readonly Role[] = Object.freeze([
  { name: 'admin', description: 'every command on every resource', grants: [{ commands: ['*'], resources: ['*'] }], origin: 'builtin' as const },
  {
    name: 'reader',
    description: 'read-only: list, describe and read tables, records and topics',
    grants: [{
      // mq.connect: a reader may connect an MQTT client (with any client id) to read messages.
      commands: ['*.list', '*.get', '*.describe', '*.find', '*.count', 'cursor.*', 'mq.retrieve', 'mq.connect'],
      resources: ['*'],
    }],
    origin: 'builtin' as const,
  },
]);

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What a resource pattern may look like (docs/roles.md): a typo must not make a deny match nothing. */
const RESOURCE_PATTERN = /^(\*|system|table:(\*|.+\/[^/]+)|(database|topic|client|account|role):.+)$/;

/** Throws INVALID_PARAMETER naming the first resource pattern of `grants` that names no kind of resource. */
export function checkResourcePatterns(grants: readonly Grant[] | undefined, param: string): void {
  grants?.forEach((grant, i) => grant.resources.forEach((resource, j) => {
    if (!RESOURCE_PATTERN.test(resource)) {
      throw new EngineError('INVALID_PARAMETER', {
        param: `${param}[${i}].resources[${j}]`,
        reason: `"${resource}" is not a resource pattern: use *, system, database:<db>, table:<db>/<table> (or table:*), topic:<filter>, client:<name>, account:<name> or role:<name>`,
      });
    }
  }));
}

export class RoleCatalog {
  private readonly fixed = new Map<string, Role>();
  private readonly stored = new Map<string, Role>();
  /** Roles this node is storing (`persist`): the store's tap tells them before the write returns. */
  private readonly persisting = new CatalogWrites<Role>();
  /** Roles this node is deleting (`delete`): in memory until the store has the removal. */
  private readonly removing = new CatalogRemovals();
  private store?: InternalStore<Role>;
  private readonly listeners: Array<(role: string) => void> = [];
  /** Whether some role denies by a table pattern (see deniesByTableName); undefined: not known since the last change. */
  private tableDenies?: boolean;

  constructor(declared: readonly RoleSetting[] = []) {
    for (const role of BUILTIN_ROLES) this.fixed.set(role.name, role);
    for (const role of declared) {
      checkResourcePatterns(role.grants, `roles.${role.name}.grants`);
      checkResourcePatterns(role.denies, `roles.${role.name}.denies`);
    }
    for (const role of declared) this.fixed.set(role.name.toLowerCase(), { ...role, name: role.name.toLowerCase(), origin: 'settings' });
  }

  open(store: InternalStore<Role>): void {
    this.store = store;
    this.tableDenies = undefined;
    for (const [name, role] of store.entries()) if (!this.fixed.has(name)) this.stored.set(name, role);
  }

  /**
   * A role stored or removed by the store itself: a write made through another node of a
   * cluster, applied here from the replicated log (the engine taps the store's entries).
   */
  storedElsewhere(key: string, role: Role | undefined): void {
    this.removing.told(key);
    // This node's own write is taken by `persist` once stored, unless a later entry for the key comes first.
    if (this.persisting.told(key, role)) return;
    if (this.fixed.has(key)) return;
    if (role === undefined ? !this.stored.has(key) : this.stored.get(key) === role) return;
    if (role === undefined) this.stored.delete(key);
    else this.stored.set(key, role);
    this.changed(key);
  }

  /** Called with a role's name when it changes (altered, deleted), so per-connection authorization caches can be dropped. */
  onChange(listener: (role: string) => void): void {
    this.listeners.push(listener);
  }

  get(name: string): Role | undefined {
    const key = name.toLowerCase();
    return this.fixed.get(key) ?? this.stored.get(key);
  }

  require(name: string): Role {
    const role = this.get(name);
    if (!role) throw new EngineError('ROLE_NOT_FOUND', { role: name });
    return role;
  }

  list(): Role[] {
    return [...this.fixed.values(), ...this.stored.values()];
  }

  /**
   * Whether any role denies something by a `table:` pattern or by `*` (which covers every table
   * name too). Only such a deny can refuse a topic by
   * its integration table's name (kernel/auth/resource-aliases.ts): while none exists, a topic
   * getting its table changes no decision, and caches need not be dropped.
   */
  get deniesByTableName(): boolean {
    this.tableDenies ??= this.list().some((role) => role.denies?.some((deny) => deny.resources.some((resource) => resource === '*' || resource.startsWith('table:'))) ?? false);
    return this.tableDenies;
  }

  async create(role: Role): Promise<Role> {
    const name = role.name.toLowerCase();
    if (!NAME.test(name)) throw new EngineError('INVALID_PARAMETER', { param: 'roleName', reason: 'use 1-64 letters, digits, _ . -' });
    if (this.get(name)) throw new EngineError('ROLE_EXISTS', { role: name });
    checkResourcePatterns(role.grants, 'grants');
    checkResourcePatterns(role.denies, 'denies');
    const created: Role = { name, description: role.description, grants: role.grants, denies: role.denies ?? [], origin: 'stored' };
    await this.persist(created);
    return created;
  }

  async alter(name: string, change: Partial<Pick<Role, 'description' | 'grants' | 'denies'>>): Promise<Role> {
    const current = this.mutable(name);
    checkResourcePatterns(change.grants, 'grants');
    checkResourcePatterns(change.denies, 'denies');
    const altered: Role = { ...current, ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };
    await this.persist(altered);
    return altered;
  }

  async delete(name: string): Promise<void> {
    const role = this.mutable(name);
    // Told by the store's tap (storedElsewhere followed it), or else removed here (catalog-writes.ts).
    if (await this.removing.remove(role.name, () => this.store?.remove(role.name))) return;
    if (this.stored.delete(role.name)) this.changed(role.name);
  }

  private mutable(name: string): Role {
    const role = this.require(name);
    if (role.origin !== 'stored') throw new EngineError('ROLE_READ_ONLY', { role: role.name });
    return role;
  }

  private async persist(role: Role): Promise<void> {
    // Not the latest any more: an entry for the role told after this one (deleted meanwhile) holds.
    if (!await this.persisting.write(role.name, role, () => this.store?.put(role.name, role))) return;
    this.stored.set(role.name, role);
    this.changed(role.name);
  }

  private changed(role: string): void {
    this.tableDenies = undefined;
    for (const listener of this.listeners) listener(role);
  }
}
