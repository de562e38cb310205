/**
 * Every error the engine can report, defined once.
 *
 * `code` is the numeric `errorCode` clients see (docs/errors.md lists every one: which the established
 * product uses, and which are ours). `status` is the HTTP status REST answers
 * with. `message` is a template: `{name}` is replaced by the matching detail.
 */
import { randomBytes } from 'node:crypto';

export interface ErrorDefinition {
  readonly code: number;
  readonly status: number;
  readonly message: string;
}

export const ERRORS = {
  // Authentication and authorization
  INVALID_TOKEN: { code: 12031, status: 401, message: 'authToken is invalid or has expired' },
  BAD_CREDENTIALS: { code: 12033, status: 401, message: 'invalid account name or password' },
  NOT_AUTHORIZED: { code: 12030, status: 403, message: 'account "{account}" is not allowed to run {command} on {resource}' },
  SESSION_NOT_OWNED: { code: 12032, status: 403, message: 'the session belongs to another account' },
  TOO_MANY_FAILED_LOGINS: { code: 12034, status: 429, message: 'too many failed logins for this account or address: try again in {retryAfter} s' },
  // Client certificates (issue 22 part 2; kernel/auth/certificate-login.ts)
  BAD_CERTIFICATE: { code: 12035, status: 401, message: 'the client certificate is not accepted: {reason}' },

  // Request shape
  MISSING_PARAMETER: { code: 12025, status: 400, message: 'missing required parameter "{param}"' },
  INVALID_PARAMETER: { code: 12012, status: 400, message: 'invalid value for "{param}": {reason}' },
  MALFORMED_JSON: { code: 12009, status: 400, message: 'the request body is not valid JSON: {reason}' },
  CONTENT_TOO_LARGE: { code: 12028, status: 413, message: 'the request body exceeds the limit of {limit} bytes' },
  UNKNOWN_ACTION: { code: 14701, status: 400, message: 'unknown action "{action}" for api "{api}"' },
  ROUTE_NOT_FOUND: { code: 12004, status: 404, message: 'no route for {method} {url}' },
  UNKNOWN_COMMAND: { code: 12005, status: 500, message: 'no command named "{command}" is registered' },

  // Databases, tables, columns, indexes
  DATABASE_NOT_FOUND: { code: 4094, status: 404, message: 'database "{database}" does not exist' },
  DATABASE_EXISTS: { code: 4093, status: 400, message: 'database "{database}" already exists' },
  DATABASE_IN_USE: { code: 4096, status: 400, message: 'database "{database}" cannot be deleted: {reason}' },
  TABLE_NOT_FOUND: { code: 4023, status: 404, message: 'table "{table}" does not exist in database "{database}"' },
  TABLE_EXISTS: { code: 4022, status: 400, message: 'table "{table}" already exists in database "{database}"' },
  TABLE_READ_ONLY: { code: 4025, status: 400, message: 'table "{table}" is an integration table and can only be written by publishing to its topic' },
  INVALID_TABLE_DEFINITION: { code: 4026, status: 400, message: 'invalid table definition: {reason}' },
  COLUMN_NOT_FOUND: { code: 4014, status: 400, message: 'column "{column}" does not exist in table "{table}"' },
  INVALID_COLUMN_VALUE: { code: 4031, status: 400, message: 'invalid value for column "{column}": {reason}' },
  INDEX_NOT_FOUND: { code: 4045, status: 404, message: 'index "{index}" does not exist on table "{table}"' },
  INDEX_EXISTS: { code: 4051, status: 400, message: 'index "{index}" already exists on table "{table}"' },
  INVALID_INDEX_DEFINITION: { code: 4052, status: 400, message: 'invalid index definition: {reason}' },

  // Records and queries
  DUPLICATE_KEY: { code: 2, status: 400, message: 'duplicate key in unique index "{index}" of table "{table}"' },
  RECORD_NOT_FOUND: { code: 101, status: 404, message: 'record {id} does not exist in table "{table}"' },
  FILTER_SYNTAX: { code: 4072, status: 400, message: 'filter error at position {position}: {reason}' },
  INVALID_QUERY: { code: 4073, status: 400, message: 'invalid query: {reason}' },
  CURSOR_NOT_FOUND: { code: 4080, status: 404, message: 'cursor "{cursorId}" does not exist or has expired' },
  SQL_SYNTAX_ERROR: { code: 4074, status: 400, message: 'SQL syntax error at position {position}: {reason}' },
  SQL_ERROR: { code: 4075, status: 400, message: 'SQL error: {reason}' },
  SQL_TIMEOUT: { code: 4076, status: 400, message: 'the SQL statement ran longer than {ms} ms and was stopped' },
  SQL_TOO_MANY_CURSORS: { code: 4077, status: 400, message: 'this session has {limit} SQL cursors open: close one (closeCursor) or let one idle out before opening another' },
  TRANSACTION_NOT_FOUND: { code: 4081, status: 404, message: 'transaction "{transactionId}" does not exist, has ended, or belongs to another session' },

  // Accounts and roles
  ACCOUNT_NOT_FOUND: { code: 12040, status: 404, message: 'account "{account}" does not exist' },
  ACCOUNT_EXISTS: { code: 12041, status: 400, message: 'account "{account}" already exists' },
  ROLE_NOT_FOUND: { code: 12042, status: 404, message: 'role "{role}" does not exist' },
  ROLE_EXISTS: { code: 12043, status: 400, message: 'role "{role}" already exists' },
  ROLE_READ_ONLY: { code: 12044, status: 400, message: 'role "{role}" is built in or declared in the settings and cannot be changed here' },

  // Message queues
  MQ_SESSION_NOT_FOUND: { code: 14237, status: 404, message: 'client "{clientName}" has no MQ session this account may use' },
  INVALID_TOPIC: { code: 14243, status: 400, message: 'invalid topic name "{topic}": {reason}' },
  TOPIC_NOT_FOUND: { code: 14244, status: 404, message: 'topic "{topic}" does not exist (no message was ever published to it)' },
  CLIENT_NAME_IN_USE: { code: 14221, status: 400, message: 'client name "{clientName}" is in use' },

  // Server
  NOT_AVAILABLE: { code: 12006, status: 503, message: '{feature} is not available: {reason}' },
  // Storage (issue 20): a full disk or LMDB map refuses writes; reads and what is stored stay intact.
  STORAGE_FULL: { code: 12050, status: 507, message: 'the storage is full ({reason}): writes are refused until space is freed, reads still work' },
  // Cluster (plugins/cluster-nats, docs/cluster.md)
  CLUSTER_UNAVAILABLE: { code: 12060, status: 503, message: 'the cluster did not confirm the write ({reason}): it {outcome}' },
  // A transaction, cursor or action session of another node (kernel/node-bound.ts): 421 Misdirected Request.
  NODE_BOUND: { code: 12061, status: 421, message: 'this {what} was opened on node "{node}" and can only be used there (this is node "{here}")' },
  // An admin action needing another node (docs/cluster.md, "Admin actions across the cluster") that did not answer in time: 504.
  NODE_UNREACHABLE: { code: 12062, status: 504, message: 'node "{node}", which holds the {what}, did not answer ({reason}): what happened there is not known' },
  // cluster_read_consistency "latest": a read this node cannot show to be current is not answered.
  CLUSTER_NOT_CURRENT: { code: 12063, status: 503, message: 'this node could not confirm that it holds the latest state ({reason}); nothing was read' },
  INTERNAL: { code: 12001, status: 500, message: 'internal error, reference {reference} (the server log has the details)' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorId = keyof typeof ERRORS;
export type ErrorDetails = Record<string, string | number | boolean | bigint | null | undefined>;

/** The one error type handlers throw; each protocol maps it to its wire form in one file. */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly id: ErrorId;
  readonly code: number;
  readonly status: number;
  readonly details: ErrorDetails;

  constructor(id: ErrorId, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    const definition: ErrorDefinition = ERRORS[id];
    super(formatMessage(definition.message, details), options);
    this.id = id;
    this.code = definition.code;
    this.status = definition.status;
    this.details = details;
  }

  /** The stable symbolic name, e.g. `ENGINE_ERR_TABLE_NOT_FOUND`. */
  get errorName(): string {
    return `ENGINE_ERR_${this.id}`;
  }
}

function formatMessage(template: string, details: ErrorDetails): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) =>
    key in details ? String(details[key]) : whole);
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}

/**
 * Turns anything thrown into an EngineError, keeping the original as `cause`: a foreign error
 * becomes INTERNAL with a fresh reference and none of its text (kernel/client-error.ts logs it).
 */
export function toEngineError(error: unknown): EngineError {
  if (error instanceof EngineError) return error;
  return new EngineError('INTERNAL', { reference: newErrorReference() }, { cause: error });
}

/** A short random id that ties an error answer to its log entry. */
export function newErrorReference(): string {
  return randomBytes(6).toString('hex');
}
