/**
 * The one authorization decision, for every protocol: may this principal run this command on
 * this resource? Denies of any held role win; then any grant allows.
 */
import { EngineError } from '../errors';
import type { Resource } from '../bus/command';
import type { Principal } from './principal';
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
function glob(pattern: string): RegExp {
  let regex = globCache.get(pattern);
  if (!regex) {
    regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
    globCache.set(pattern, regex);
  }
  return regex;
}

function commandMatches(patterns: readonly string[], command: string): boolean {
  for (const pattern of patterns) if (pattern === '*' || pattern === command || glob(pattern).test(command)) return true;
  return false;
}

function resourceMatches(patterns: readonly string[], resource: Resource, key: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*') return true;
    if (resource.kind === 'topic' && pattern.startsWith('topic:')) {
      // A grant or a deny applies to a topic filter it covers whole: a wildcard subscription that
      // merely overlaps a denied topic is granted, and that topic's messages are withheld at
      // delivery (CONTRACT "MQTT"; the message core asks per topic).
      if (filterCovers(pattern.slice('topic:'.length), resource.topic)) return true;
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

export function isAllowed(roles: RoleCatalog, principal: Principal, command: string, resource: Resource): boolean {
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

/**
 * true when a role the principal holds denies `command` on `resource`, whatever it grants: a
 * listing granted on a database leaves out the tables a role denies (`table.list` on them).
 */
export function isDenied(roles: RoleCatalog, principal: Principal, command: string, resource: Resource): boolean {
  const key = resourceKey(resource);
  for (const name of principal.roles) {
    const role = roles.get(name);
    if (role && anyMatch(role.denies, command, resource, key)) return true;
  }
  return false;
}

export function authorize(roles: RoleCatalog, principal: Principal, command: string, resource: Resource): void {
  if (!isAllowed(roles, principal, command, resource)) {
    throw new EngineError('NOT_AUTHORIZED', { account: principal.account, command, resource: resourceKey(resource) });
  }
}
