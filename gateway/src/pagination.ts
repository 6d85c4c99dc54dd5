import { z } from 'zod';
import { AppError } from '@platform/runtime';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Query parameters every list accepts; extend it with the list's own filters (`pageQuery.extend({...})`). */
export const pageQuery = z.object({
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .meta({ description: `Page size, 1 to ${MAX_PAGE_SIZE}.` }),
  cursor: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .meta({ description: 'Opaque cursor from the nextCursor of the previous page.' }),
});

export type PageQuery = z.infer<typeof pageQuery>;

const pageSchemas = new WeakSet<z.ZodType>();

/**
 * The body of a list response: `{data: [...], nextCursor}`; `nextCursor` is null on the last page. Used as a
 * response schema it describes the whole body (other response schemas describe only `data`).
 */
export function pageResponse<T extends z.ZodType>(itemSchema: T) {
  const schema = z.object({
    data: z.array(itemSchema),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` to get the next page; null on the last page.' }),
  });
  pageSchemas.add(schema);
  return schema;
}

export function isPageResponseSchema(schema: z.ZodType): boolean {
  return pageSchemas.has(schema);
}

/** An opaque cursor: base64url of the JSON of whatever position the list needs to resume from. */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/**
 * Reads a cursor made by `encodeCursor`; a cursor that does not decode (or, given a schema, does not match it)
 * is a 400 naming `cursor`.
 */
export function decodeCursor<T = unknown>(cursor: string, schema?: z.ZodType<T>): T {
  const malformed = () =>
    new AppError('invalid_request', 'The cursor is malformed; start again from the first page', {
      fields: [{ field: 'cursor', problem: 'malformed cursor' }],
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!schema) return value as T;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw malformed();
  return parsed.data;
}
