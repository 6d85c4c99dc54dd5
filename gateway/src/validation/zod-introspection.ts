import type { z } from 'zod';

/** The parts of zod v4's internal definition the edge reads (stable across v4 minor versions). */
interface ZodDefinition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: readonly z.ZodType[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  items?: readonly z.ZodType[];
  rest?: z.ZodType | null;
}

export function definitionOf(schema: z.ZodType): ZodDefinition {
  return (schema as unknown as { _zod: { def: ZodDefinition } })._zod.def;
}

/** Wrappers that do not change what a value looks like on the wire. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema under optional/nullable/default/... and the input side of pipes (transforms, coerce chains). */
export function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 20; i++) {
    const def = definitionOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
  return current;
}

export function isStrictObject(schema: z.ZodType): boolean {
  const def = definitionOf(schema);
  return def.type === 'object' && def.catchall !== undefined && definitionOf(def.catchall).type === 'never';
}

/**
 * Dotted paths of object schemas, below the top level, that would silently drop unknown fields. Request
 * bodies refuse unknown fields at every depth, so those must be written with `z.strictObject`.
 */
export function nonStrictNestedObjects(schema: z.ZodType, path = ''): string[] {
  const found: string[] = [];
  const visit = (node: z.ZodType, at: string, top: boolean) => {
    const inner = unwrap(node);
    const def = definitionOf(inner);
    if (def.type === 'object') {
      // A catchall (strict, or an explicit loose/passthrough) is a deliberate choice; only the default strips.
      if (!top && def.catchall === undefined) found.push(at || '(root)');
      for (const [key, child] of Object.entries(def.shape ?? {})) visit(child, at ? `${at}.${key}` : key, false);
    } else if (def.type === 'array' && def.element) {
      visit(def.element, at ? `${at}.*` : '*', false);
    } else if ((def.type === 'union' || def.type === 'discriminated_union') && def.options) {
      for (const option of def.options) visit(option, at, false);
    } else if (def.type === 'record' && def.valueType) {
      visit(def.valueType, at ? `${at}.*` : '*', false);
    }
  };
  visit(schema, path, true);
  return found;
}

/**
 * Dotted paths of fields in `value` (JSON as sent) that `schema` does not declare. Objects with a catchall take any
 * field; a union is judged by the best fitting of the options the value parses with (all of them when it parses with
 * none), so a field only another option declares still counts; an intersection declares what either side does.
 * Used to hold answers to their documented shape.
 */
export function undeclaredFields(schema: z.ZodType, value: unknown, path = ''): string[] {
  const def = definitionOf(unwrap(schema));
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (value === null || typeof value !== 'object') return [];
  if (def.type === 'object' && !Array.isArray(value)) {
    const shape = def.shape ?? {};
    const found: string[] = [];
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (shape[key]) found.push(...undeclaredFields(shape[key], child, at(key)));
      else if (def.catchall === undefined) found.push(at(key));
    }
    return found;
  }
  if (def.type === 'array' && def.element && Array.isArray(value)) return value.flatMap((item, index) => undeclaredFields(def.element!, item, at(String(index))));
  if (def.type === 'record' && def.valueType) {
    return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => undeclaredFields(def.valueType!, child, at(key)));
  }
  if ((def.type === 'union' || def.type === 'discriminated_union') && def.options?.length) {
    const parsing = def.options.filter((option) => option.safeParse(value).success);
    return (parsing.length > 0 ? parsing : def.options)
      .map((option) => undeclaredFields(option, value, path))
      .reduce((best, next) => (next.length < best.length ? next : best));
  }
  if (def.type === 'lazy' && def.getter) return undeclaredFields(def.getter(), value, path);
  if (def.type === 'intersection' && def.left && def.right) {
    const right = new Set(undeclaredFields(def.right, value, path));
    return undeclaredFields(def.left, value, path).filter((field) => right.has(field));
  }
  if (def.type === 'tuple' && def.items && Array.isArray(value)) {
    return value.flatMap((item, index) => {
      const element = def.items![index] ?? def.rest ?? undefined;
      return element ? undeclaredFields(element, item, at(String(index))) : [];
    });
  }
  return [];
}
