import type { z } from 'zod';
import { definitionOf, unwrap } from './zod-introspection';

const NUMBER = /^-?(?:\d+|\d*\.\d+)(?:[eE][-+]?\d+)?$/;

function coerceValue(schema: z.ZodType, value: unknown): unknown {
  const target = unwrap(schema);
  const def = definitionOf(target);
  if (def.type === 'array' && def.element) {
    const items = Array.isArray(value) ? value : [value];
    return items.map((item) => coerceValue(def.element!, item));
  }
  if (typeof value !== 'string') return value;
  switch (def.type) {
    case 'number':
      return NUMBER.test(value) ? Number(value) : value;
    case 'bigint':
      return /^-?\d+$/.test(value) ? BigInt(value) : value;
    case 'boolean':
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return value;
    default:
      return value;
  }
}

/**
 * Query strings and path parameters arrive as strings (or repeated strings). This converts each value to what
 * its schema expects — numbers, booleans, arrays from one or repeated parameters — so route schemas say
 * `z.number()` and the OpenAPI document shows an integer, not a string. Values that do not convert are left
 * as they are for the schema to refuse with a clear message.
 */
export function coerceStringInput(schema: z.ZodType, raw: Record<string, unknown>): Record<string, unknown> {
  const shape = definitionOf(unwrap(schema)).shape ?? {};
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    result[key] = shape[key] ? coerceValue(shape[key], value) : value;
  }
  return result;
}
