/**
 * How the REST context reads requests: bodies are JSON whatever the Content-Type says (curl's
 * default form type included; an empty body is no body), and the route schemas validate with
 * two ajv instances: params and query strings are coerced from their text form, bodies are not
 * (a string "5" stays a string, and the column type decides).
 */
import Ajv from 'ajv';
import { lazyValidator } from '../../kernel/schema-validator';
import { EngineError } from '../../kernel/errors';
import { utf8BodyText } from '../../lib/http/utf8-body';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const paramsAjv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
const bodyAjv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });

export function useRestRequestParsing(fastify: FastifyInstance): void {
  fastify.setValidatorCompiler(({ schema, httpPart }) => lazyValidator(schema as Record<string, unknown>, 'a REST route', httpPart === 'body' ? bodyAjv : paramsAjv));

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
      if (error === null) {
        done(null, parsed);
        return;
      }
      const syntax = syntaxErrorOf(text);
      if (syntax === undefined) {
        // Valid JSON, refused on purpose (prototype poisoning): say so instead of "not valid JSON".
        done(new EngineError('INVALID_PARAMETER', { param: 'body', reason: 'keys named "__proto__" (or "constructor" with "prototype") are not accepted' }));
        return;
      }
      // fastify's own text names application/json whatever the request's type was: say where it breaks.
      done(new EngineError('MALFORMED_JSON', { reason: syntax }));
    });
  };
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  // Bytes, so a body that is not UTF-8 is refused rather than decoded with U+FFFD (utf8-body.ts).
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, parse);
}

/** Why a body that fastify's parser refused is not JSON; undefined: it is (refused for a poisoning key). */
function syntaxErrorOf(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
