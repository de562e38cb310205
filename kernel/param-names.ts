/**
 * Bus commands name their params in one vocabulary (`database`, `limit`, `records[2].values`);
 * each protocol has its own (REST `db` and `top`, actions `databaseName` and `maxRecords`). A
 * protocol's error file renames the `param` of an error with its table of renames, so a message
 * names what the client sent. Names a protocol shares with the commands need no entry.
 */
import { EngineError } from './errors';

/** `[pattern on the command's param path, replacement]`, first match wins (`$1` refers to a group). */
export type ParamRenames = ReadonlyArray<readonly [RegExp, string]>;

/** The error with its `param` named as the protocol names it (the same error when nothing changes). */
export function renameParam(error: EngineError, renames: ParamRenames): EngineError {
  const param = error.details.param;
  if (typeof param !== 'string') return error;
  for (const [pattern, replacement] of renames) {
    if (!pattern.test(param)) continue;
    const renamed = param.replace(pattern, replacement);
    return renamed === param ? error : new EngineError(error.id, { ...error.details, param: renamed }, { cause: error.cause });
  }
  return error;
}
