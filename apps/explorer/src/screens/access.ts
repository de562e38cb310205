/**
 * Accounts and roles (`#/access`): create accounts and assign or revoke their roles; create a role
 * or edit its grants and denies (JSON), with their effect in words ("may publish to topic
 * sensors/#"). The server decides; this screen only calls the admin actions (docs/roles.md).
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, errorText } from '../api.js';
import type { ScreenProps } from '../app.js';

interface Account { username: string; roles: string[]; description?: string }
interface Rule { commands: string[]; resources: string[] }
interface Role { roleName: string; description?: string; grants: Rule[]; denies?: Rule[]; origin: string }

/** What a command lets one do, in words. */
const VERBS: Record<string, string> = {
  'mq.publish': 'publish to', 'mq.subscribe': 'subscribe to', 'mq.retrieve': 'read the messages of', 'mq.connect': 'connect as',
  'mq.takeover': 'take over the sessions of', 'topic.list': 'list', 'table.list': 'list', 'record.read': 'read records of',
  'record.insert': 'insert records into', 'record.update': 'update records of', 'record.delete': 'delete records of', 'record.*': 'read and write records of',
  '*': 'do anything to',
};

function verb(command: string): string {
  return VERBS[command] ?? (command.endsWith('.*') ? `do any ${command.slice(0, -2)} command to` : `run ${command} on`);
}

function resourceText(resource: string): string {
  const at = resource.indexOf(':');
  if (at < 0) return resource === '*' ? 'everything' : resource;
  const kind = resource.slice(0, at);
  const name = resource.slice(at + 1);
  return `${kind === 'client' ? 'client' : kind} ${name}`;
}

/** The effect of grants and denies, one sentence a command. */
export function effectLines(role: Pick<Role, 'grants' | 'denies'>): string[] {
  const lines: string[] = [];
  for (const [rules, prefix] of [[role.grants, 'may'], [role.denies ?? [], 'may not']] as const) {
    for (const rule of rules) {
      for (const command of rule.commands) lines.push(`${prefix} ${verb(command)} ${rule.resources.map(resourceText).join(', ') || 'nothing'}`);
    }
  }
  return lines;
}

export function AccessScreen(_props: ScreenProps) {
  const [accounts, setAccounts] = useState<Account[] | null>(null);
  const [roles, setRoles] = useState<Role[]>([]);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    Promise.all([
      call<{ accounts: Account[] }>('admin', 'listAccounts', {}, abort.signal),
      call<{ roles: Role[] }>('admin', 'listRoles', {}, abort.signal),
    ]).then(([a, r]) => { setAccounts(a.accounts); setRoles(r.roles); setError(''); })
      .catch((caught) => { if (!abort.signal.aborted) setError(errorText(caught)); });
    return () => abort.abort();
  }, [reload]);

  const run = async (action: string, params: Record<string, unknown>, done: string): Promise<boolean> => {
    try {
      await call('admin', action, params);
      setNotice(done);
      setError('');
      setReload((n) => n + 1);
      return true;
    } catch (caught) {
      setError(errorText(caught));
      return false;
    }
  };

  return html`
    <section class="ops-access" aria-label="Accounts and roles">
      <div class="row ops-heading"><h1 class="grow">Accounts and roles</h1></div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${notice && html`<p class="ok" role="status">${notice}</p>`}
      ${accounts === null ? html`<p class="muted">Loading…</p>` : html`
        <div class="ops-columns">
          <${Accounts} accounts=${accounts} roles=${roles} run=${run} />
          <${Roles} roles=${roles} run=${run} />
        </div>`}
    </section>`;
}

type Run = (action: string, params: Record<string, unknown>, done: string) => Promise<boolean>;

function Accounts({ accounts, roles, run }: { accounts: Account[]; roles: Role[]; run: Run }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  return html`
    <section class="card" aria-label="Accounts">
      <h2>Accounts</h2>
      <table aria-label="Accounts list">
        <thead><tr><th>Account</th><th>Roles</th><th>Add a role</th></tr></thead>
        <tbody>${accounts.map((account) => html`
          <tr key=${account.username}>
            <td class="mono">${account.username}</td>
            <td>${account.roles.length === 0 ? html`<span class="muted">none</span>` : account.roles.map((role) => html`
              <span class="chip" key=${role}>${role} <button type="button" class="link" aria-label=${`Revoke ${role} from ${account.username}`}
                onClick=${() => { void run('revokeRolesFromAccounts', { usernames: [account.username], roleNames: [role] }, `Role ${role} revoked from ${account.username}.`); }}>×</button></span>`)}</td>
            <td><select aria-label=${`Assign a role to ${account.username}`} value="" onChange=${(event: Event) => {
              const role = (event.target as HTMLSelectElement).value;
              if (role) void run('assignRolesToAccounts', { usernames: [account.username], roleNames: [role] }, `Role ${role} assigned to ${account.username}.`);
            }}>
              <option value="">Assign…</option>
              ${roles.filter((role) => !account.roles.includes(role.roleName)).map((role) => html`<option value=${role.roleName}>${role.roleName}</option>`)}
            </select></td>
          </tr>`)}
        </tbody>
      </table>
      <form class="ops-form" aria-label="New account" onSubmit=${(event: Event) => {
        event.preventDefault();
        void run('createAccount', { username, password, roles: chosen }, `Account ${username} created.`).then((ok) => { if (ok) { setUsername(''); setPassword(''); setChosen([]); } });
      }}>
        <h3>New account</h3>
        <label>Account name <input required value=${username} onInput=${(event: Event) => setUsername((event.target as HTMLInputElement).value)} /></label>
        <label>Password <input type="password" required autocomplete="new-password" value=${password} onInput=${(event: Event) => setPassword((event.target as HTMLInputElement).value)} /></label>
        <fieldset><legend>Roles</legend>
          ${roles.map((role) => html`<label class="check"><input type="checkbox" checked=${chosen.includes(role.roleName)}
            onChange=${(event: Event) => setChosen((event.target as HTMLInputElement).checked ? [...chosen, role.roleName] : chosen.filter((name) => name !== role.roleName))} /> ${role.roleName}</label>`)}
        </fieldset>
        <button type="submit" class="primary">Create account</button>
      </form>
    </section>`;
}

const NEW_ROLE = { grants: [{ commands: ['mq.subscribe', 'mq.retrieve', 'topic.list'], resources: ['topic:sensors/#'] }], denies: [] as Rule[] };

function Roles({ roles, run }: { roles: Role[]; run: Run }) {
  const [selected, setSelected] = useState('');
  const role = roles.find((candidate) => candidate.roleName === selected);
  const [name, setName] = useState('');
  const [text, setText] = useState(JSON.stringify(NEW_ROLE, null, 2));
  useEffect(() => {
    setText(JSON.stringify(role ? { grants: role.grants, denies: role.denies ?? [] } : NEW_ROLE, null, 2));
  }, [selected, role?.grants, role?.denies]);
  let parsed: { grants: Rule[]; denies?: Rule[] } | null = null;
  let problem = '';
  try {
    const value = JSON.parse(text) as { grants?: unknown; denies?: unknown };
    if (!Array.isArray(value.grants) || (value.denies !== undefined && !Array.isArray(value.denies))) problem = 'grants (and denies) are arrays of {commands, resources}';
    else parsed = value as { grants: Rule[]; denies?: Rule[] };
  } catch (caught) {
    problem = (caught as Error).message;
  }
  const editable = !role || role.origin === 'stored';
  return html`
    <section class="card" aria-label="Roles">
      <h2>Roles</h2>
      <label>Role <select aria-label="Role" value=${selected} onChange=${(event: Event) => setSelected((event.target as HTMLSelectElement).value)}>
        <option value="">New role…</option>
        ${roles.map((candidate) => html`<option value=${candidate.roleName}>${candidate.roleName} (${candidate.origin})</option>`)}
      </select></label>
      ${!role && html`<label>Role name <input aria-label="Role name" value=${name} onInput=${(event: Event) => setName((event.target as HTMLInputElement).value)} /></label>`}
      <label class="wide">Grants and denies (JSON)
        <textarea aria-label="Grants and denies" rows="10" readonly=${!editable} value=${text} onInput=${(event: Event) => setText((event.target as HTMLTextAreaElement).value)}></textarea></label>
      ${problem ? html`<p class="error">${problem}</p>` : html`
        <div aria-label="Effect" role="region">
          <h3>Effect</h3>
          <ul class="effect">${effectLines(parsed!).map((line) => html`<li>${line}</li>`)}</ul>
        </div>`}
      ${!editable && html`<p class="muted">A ${role!.origin} role cannot be changed here.</p>`}
      ${editable && html`<button type="button" class="primary" disabled=${parsed === null || (!role && !name.trim())} onClick=${() => {
        if (!parsed) return;
        if (role) void run('alterRole', { roleName: role.roleName, grants: parsed.grants, denies: parsed.denies ?? [] }, `Role ${role.roleName} saved.`);
        else void run('createRole', { roleName: name.trim(), grants: parsed.grants, denies: parsed.denies ?? [] }, `Role ${name.trim()} created.`).then((ok) => { if (ok) setSelected(name.trim()); });
      }}>${role ? 'Save role' : 'Create role'}</button>`}
    </section>`;
}
