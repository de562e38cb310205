/**
 * How the REST context reads requests: bodies are JSON whatever the Content-Type says (curl's
 * default form type included; an empty body is no body), and the route schemas validate with
 * two ajv instances: params and query strings are coerced from their text form, bodies are not
 * (a string "5" stays a string, and the column type decides).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { EngineError } from '../../kernel/errors';
import { utf8BodyText } from '../../lib/http/utf8-body';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const paramsAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });

/**
 * A route's validator, compiled at its first request: compiling every route's schemas took a tenth
 * of a server's start. fastify reads `errors` off the function it was given after a failed call.
 */
function lazily(ajv: Ajv, schema: Record<string, unknown>): ValidateFunction {
  if (!ajv.validateSchema(schema)) throw new Error(`a REST route schema is not valid JSON Schema: ${ajv.errorsText(ajv.errors)}`);
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= ajv.compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

export function useRestRequestParsing(fastify: FastifyInstance): void {
  fastify.setValidatorCompiler(({ schema, httpPart }) => lazily((httpPart === 'body' ? bodyAjv : paramsAjv), schema as Record<string, unknown>));

  const json = fastify.getDefaultJsonParser('error', 'error');
  const parse = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => {
    let text: string;
    try {
      text = utf8BodyText(body);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    json(request, text, (error, parsed) => {
      if (error && hasPoisonKey(text)) {
        // Valid JSON, refused on purpose (prototype poisoning): say so instead of "not valid JSON".
        done(new EngineError('INVALID_PARAMETER', { param: 'body', reason: 'keys named "__proto__" (or "constructor" with "prototype") are not accepted' }));
        return;
      }
      done(error, parsed);
    });
  };
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  // Bytes, so a body that is not UTF-8 is refused rather than decoded with U+FFFD (utf8-body.ts).
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, parse);
}

/** Whether a body that failed to parse did so because it is valid JSON with a poisoning key. */
function hasPoisonKey(text: string): boolean {
  if (text.indexOf('__proto__') === -1 && text.indexOf('prototype') === -1) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
