/**
 * The one authorization decision, for every protocol: may this principal run this command on
 * this resource? Denies of any held role win; then any grant allows.
 *
 * A resource with two names (a topic and its integration table: resource-aliases.ts) is decided on
 * both: named as a table, the command must also be allowed on the topic (the table is a view of
 * the topic's messages); named as a topic, no role may deny the matching table commands on its
 * table. Either way a deny on either name holds (docs/roles.md, "One resource, two names").
 */
import { EngineError } from '../errors';
import type { Resource } from '../bus/command';
import type { Principal } from './principal';
import { tableCommandsOf, topicCommandOf, type ResourceAliases } from './resource-aliases';
import type { Grant, RoleCatalog } from './roles';
import { filterCovers } from './topic-filter';

export function resourceKey(resource: Resource): string {
  switch (resource.kind) {
    case 'system': return 'system';
    case 'database': return `database:${resource.database}`;
    case 'table': return `table:${resource.database}/${resource.table}`;
    case 'topic': return `topic:${resource.topic}`;
    case 'client': return `client:${resource.clientName}`;
    case 'account': return `account:${resource.account}`;
    case 'role': return `role:${resource.role}`;
  }
}

const globCache = new Map<string, RegExp>();
/** `*` matches any run of characters; with `withinName`, never a `/` (one database or table name). */
function glob(pattern: string, withinName = false): RegExp {
  const cacheKey = withinName ? `/${pattern}` : pattern;
  let regex = globCache.get(cacheKey);
  if (!regex) {
    const any = withinName ? '[^/]*' : '.*';
    regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join(any)}$`, 'i');
    globCache.set(cacheKey, regex);
  }
  return regex;
}

function commandMatches(patterns: readonly string[], command: string): boolean {
  for (const pattern of patterns) if (pattern === '*' || pattern === command || glob(pattern).test(command)) return true;
  return false;
}

/**
 * `table:<db>/<table>` (split at its last `/`: a table name never holds one) matches each part on
 * its own, a `*` staying within its part, so `table:main/*` never reaches a database `main/x` an
 * older release let someone create; `table:*` is every table.
 */
function tableMatches(pattern: string, database: string, table: string): boolean {
  if (pattern === 'table:*') return true;
  const slash = pattern.lastIndexOf('/');
  if (slash < 0) return false;
  return glob(pattern.slice('table:'.length, slash), true).test(database) && glob(pattern.slice(slash + 1), true).test(table);
}

function resourceMatches(patterns: readonly string[], resource: Resource, key: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*') return true;
    if (resource.kind === 'topic' && pattern.startsWith('topic:')) {
      // A grant or a deny applies to a topic filter it covers whole: a wildcard subscription that
      // merely overlaps a denied topic is granted, and that topic's messages are withheld at
      // delivery (docs/roles.md; the message core asks per topic).
      if (filterCovers(pattern.slice('topic:'.length), resource.topic)) return true;
      continue;
    }
    if (resource.kind === 'table') {
      if (pattern.startsWith('table:') && tableMatches(pattern, resource.database, resource.table)) return true;
      continue;
    }
    if (resource.kind === 'database') {
      if (pattern.startsWith('database:') && glob(pattern.slice('database:'.length), true).test(resource.database)) return true;
      continue;
    }
    if (glob(pattern).test(key)) return true;
  }
  return false;
}

function anyMatch(grants: readonly Grant[] | undefined, command: string, resource: Resource, key: string): boolean {
  if (!grants) return false;
  for (const grant of grants) {
    if (commandMatches(grant.commands, command) && resourceMatches(grant.resources, resource, key)) return true;
  }
  return false;
}

/** The decision on one name of a resource. */
function allowedByName(roles: RoleCatalog, principal: Principal, command: string, resource: Resource): boolean {
  const key = resourceKey(resource);
  let granted = false;
  for (const name of principal.roles) {
    const role = roles.get(name);
    if (!role) continue;
    if (anyMatch(role.denies, command, resource, key)) return false;
    if (!granted && anyMatch(role.grants, command, resource, key)) granted = true;
  }
  return granted;
}

/** Does a role the principal holds deny `command` on this name of a resource? */
function deniedByName(roles: RoleCatalog, principal: Principal, command: string, resource: Resource): boolean {
  const key = resourceKey(resource);
  for (const name of principal.roles) {
    const role = roles.get(name);
    if (role && anyMatch(role.denies, command, resource, key)) return true;
  }
  return false;
}

/** What the other name of a resource requires (see the top of this file); true when it has none. */
function aliasAllows(roles: RoleCatalog, principal: Principal, command: string, resource: Resource, alias: Resource | undefined): boolean {
  if (!alias) return true;
  if (resource.kind === 'table') return allowedByName(roles, principal, topicCommandOf(command), alias);
  for (const tableCommand of tableCommandsOf(command)) if (deniedByName(roles, principal, tableCommand, alias)) return false;
  return true;
}

/** The other name the decision must check, if any. */
function otherName(roles: RoleCatalog, resource: Resource, aliases: ResourceAliases | undefined): Resource | undefined {
  if (!aliases) return undefined;
  // Named as a topic, only a deny by a table name can refuse it: while no role has one (the
  // usual case), MQTT decisions look nothing up.
  if (resource.kind === 'topic' && !roles.deniesByTableName) return undefined;
  return aliases.aliasOf(resource);
}

export function isAllowed(roles: RoleCatalog, principal: Principal, command: string, resource: Resource, aliases?: ResourceAliases): boolean {
  if (!allowedByName(roles, principal, command, resource)) return false;
  return aliasAllows(roles, principal, command, resource, otherName(roles, resource, aliases));
}

/**
 * true when the principal may not see `resource` in a listing it was granted on the container (a
 * database's tables): a role denies `command` on it, or it has another name that the principal may
 * not use with the matching command (a topic's table is listed only to who may list the topic).
 */
export function isDenied(roles: RoleCatalog, principal: Principal, command: string, resource: Resource, aliases?: ResourceAliases): boolean {
  if (deniedByName(roles, principal, command, resource)) return true;
  return !aliasAllows(roles, principal, command, resource, otherName(roles, resource, aliases));
}

export function authorize(roles: RoleCatalog, principal: Principal, command: string, resource: Resource, aliases?: ResourceAliases): void {
  if (!isAllowed(roles, principal, command, resource, aliases)) {
    throw new EngineError('NOT_AUTHORIZED', { account: principal.account, command, resource: resourceKey(resource) });
  }
}
