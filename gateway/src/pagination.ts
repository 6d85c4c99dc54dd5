import { z } from 'zod';

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
