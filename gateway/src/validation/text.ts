import { z } from 'zod';
import { isStorableInstant, type FieldError } from '@platform/runtime';

/**
 * Request strings PostgreSQL can hold. Its `text` and `jsonb` cannot hold the NUL character (U+0000): a NUL that
 * reached a statement (a name stored, a filter compared) failed it, and the caller got a 500 for its own bad
 * input. The edge refuses it as a field error instead, like any other invalid value.
 */
export const NUL_PROBLEM = 'must not contain the NUL character (U+0000)';

const hasNul = (value: string): boolean => value.includes('\u0000');

/** A string field without NUL characters; chain `.trim()`, `.min()`, `.max()`, `.meta()` as on `z.string()`. */
export function textSchema() {
  return z.string().refine((value) => !hasNul(value), NUL_PROBLEM);
}

export const TIMESTAMP_RANGE_PROBLEM = 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z';

/** An ISO 8601 date-time with an offset (`Z` or `±hh:mm`) at an instant PostgreSQL can hold (runtime isStorableInstant). */
export function timestampSchema() {
  return z.iso.datetime({ offset: true }).refine(isStorableInstant, TIMESTAMP_RANGE_PROBLEM);
}

/**
 * Every string (and object key) holding a NUL in a parsed request part, one field error each, named by its dotted
 * path as schema errors are (`servers.0.prefix`). For checking every route's strings at once, whatever its schema.
 */
export function nulFieldErrors(value: unknown, part: string): FieldError[] {
  const found: FieldError[] = [];
  const visit = (node: unknown, path: string): void => {
    if (typeof node === 'string') {
      if (hasNul(node)) found.push({ field: path || part, problem: NUL_PROBLEM });
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, path ? `${path}.${index}` : String(index)));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        const at = path ? `${path}.${key}` : key;
        if (hasNul(key)) found.push({ field: at, problem: NUL_PROBLEM });
        visit(child, at);
      }
    }
  };
  visit(value, '');
  return found;
}
