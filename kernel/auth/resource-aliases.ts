/**
 * One resource, two names. A topic's integration table is the topic (docs/storage.md, "Integration tables"): `table:<db>/<mqtt_msg_…>` and `topic:<topic>` name the same messages, so
 * the one decision (authorize.ts) checks both names, whichever one a command used (docs/roles.md,
 * "One resource, two names").
 *
 * The kernel knows no topic and no table: the plugin that does (messaging) registers a resolver
 * that tells the other name of a resource. The commands are mapped between the two vocabularies
 * here, once, since they are part of the authorization rules.
 */
import type { Resource } from '../bus/command';

/** The other name of `resource`, or undefined when it has none. Called per decision: keep it cheap. */
export type AliasResolver = (resource: Resource) => Resource | undefined;

/**
 * A table command → the topic command that must be allowed too. Reading the table's records is
 * reading the topic's messages; inserting is publishing; rewriting or deleting records, or the
 * table, deletes messages; changing columns or indexes configures the topic. Not listed: the same
 * command name on the topic.
 */
const TOPIC_COMMAND_OF: Readonly<Record<string, string>> = Object.freeze({
  'record.get': 'mq.retrieve',
  'record.find': 'mq.retrieve',
  'cursor.open': 'mq.retrieve',
  'cursor.fetch': 'mq.retrieve',
  'record.insert': 'mq.publish',
  'record.replace': 'topic.delete',
  'record.patch': 'topic.delete',
  'record.delete': 'topic.delete',
  'table.delete': 'topic.delete',
  'table.list': 'topic.list',
  'table.describe': 'topic.describe',
  'index.list': 'topic.describe',
  'index.get': 'topic.describe',
  'table.create': 'topic.configure',
  'table.alter': 'topic.configure',
  'index.create': 'topic.configure',
  'index.delete': 'topic.configure',
});

/** A topic command → the table commands of which none may be denied on its table. Not listed: the same name. */
const TABLE_COMMANDS_OF: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'mq.retrieve': ['record.get', 'record.find'],
  'mq.subscribe': ['record.get', 'record.find'],
  'mq.publish': ['record.insert'],
  'topic.delete': ['table.delete'],
  'topic.list': ['table.list'],
  'topic.describe': ['table.describe'],
  'topic.configure': ['table.alter'],
});

/** The command to check on a table's topic for `command` on the table. */
export function topicCommandOf(command: string): string {
  return TOPIC_COMMAND_OF[command] ?? command;
}

/** The commands to check on a topic's table for `command` on the topic. */
export function tableCommandsOf(command: string): readonly string[] {
  return TABLE_COMMANDS_OF[command] ?? [command];
}

export class ResourceAliases {
  private readonly resolvers: AliasResolver[] = [];

  register(resolver: AliasResolver): void {
    this.resolvers.push(resolver);
  }

  /** The other name of a table or a topic (only those have one). */
  aliasOf(resource: Resource): Resource | undefined {
    if (resource.kind !== 'table' && resource.kind !== 'topic') return undefined;
    for (const resolver of this.resolvers) {
      const alias = resolver(resource);
      if (alias) return alias;
    }
    return undefined;
  }
}
