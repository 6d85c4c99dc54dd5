/**
 * Text as PostgreSQL will store it. Its `text` and `jsonb` values refuse the NUL character (U+0000), and JSON
 * input refuses an unpaired surrogate (`JSON.stringify` writes one as a `\ud800` escape); either fails the whole
 * statement with a class 22 error. Text that arrives from outside (an MCP client's tool name or client name, a
 * captured payload) is made storable before it reaches a statement, so no value can make one fail.
 */

/** `String.prototype.isWellFormed`/`toWellFormed` (Node 20; the compile target's lib, ES2023, does not declare them). */
type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string };

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** `value` with every unpaired surrogate replaced by U+FFFD (what a UTF-8 encoder would write for it). */
export function wellFormed(value: string): string {
  const text = value as WellFormedString;
  return text.isWellFormed() ? value : text.toWellFormed();
}

/**
 * The first `max` characters (code points) of `value`: a surrogate pair is one character and is never cut in two
 * (a cut half would be an unpaired surrogate). An unpaired surrogate counts as one.
 */
export function sliceCodePoints(value: string, max: number): string {
  // A character is one or two UTF-16 units: text no longer than `max` units has at most `max` characters.
  if (value.length <= max) return value;
  let end = 0;
  for (let count = 0; count < max && end < value.length; count += 1) {
    end += isHighSurrogate(value.charCodeAt(end)) && isLowSurrogate(value.charCodeAt(end + 1)) ? 2 : 1;
  }
  return value.slice(0, end);
}

/**
 * `value` as PostgreSQL stores it: NUL characters dropped (nothing can stand for them in `text`), unpaired
 * surrogates replaced by U+FFFD, and at most `max` characters (code points), never half of one.
 */
export function storableText(value: string, max = Number.POSITIVE_INFINITY): string {
  const withoutNul = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return sliceCodePoints(wellFormed(withoutNul), max);
}

/**
 * A JSON value (as `JSON.parse` gives it) with every string in it, object keys included, made storable
 * (`storableText`): what `jsonb` and `text` columns can hold of a document that came from outside.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [storableText(key), storableJson(item)]));
  }
  return value;
}
