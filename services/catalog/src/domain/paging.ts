import type { PageRequest } from '@platform/proto/gen/platform/common/v1/common';
import { decodeCursor, encodeCursor } from '@platform/runtime';
import { GATEWAY_SLUG } from './gateway-rules';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

/** The page size asked for, within 1..200 (0, the proto default, means 50). */
export function pageLimit(page: PageRequest | undefined): number {
  return Math.min(Math.max(page?.pageSize || DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
}

/** The cursor of lists in slug order holds the last slug of the previous page. */
export const encodeSlugCursor = (slug: string): string => encodeCursor({ slug });

export function decodeSlugCursor(cursor: string): string {
  return decodeCursor(cursor, (value) => {
    const slug = (value as { slug?: unknown } | null)?.slug;
    return typeof slug === 'string' && GATEWAY_SLUG.test(slug) ? slug : null;
  });
}
