/**
 * One frozen ValueFormat object per distinct combination of members. The record codecs cache
 * resolved formats, decoders and encoders by the identity of the format object, so a protocol
 * that builds its format per request (the action interface, from session settings and response
 * options) passes it through `internFormat` to hit those caches instead of missing them.
 * The combinations are a small closed set, so the table stays small.
 */
import type { ValueFormat } from './wire-format';

const interned = new Map<string, ValueFormat>();

export function internFormat(format: ValueFormat): ValueFormat {
  const key = `${format.dateFormat}|${format.binaryFormat}|${format.variantFormat}|${format.numberFormat}|${format.stringFormat}`;
  let found = interned.get(key);
  if (found === undefined) {
    found = Object.freeze({
      dateFormat: format.dateFormat,
      binaryFormat: format.binaryFormat,
      variantFormat: format.variantFormat,
      numberFormat: format.numberFormat,
      stringFormat: format.stringFormat,
    });
    interned.set(key, found);
  }
  return found;
}
