import type { PageRequest } from '@platform/proto/gen/platform/common/v1/common';
import { AppError } from '@platform/runtime';
import { GATEWAY_SLUG } from './gateway-rules';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

/** The page size asked for, within 1..200 (0, the proto default, means 50). */
export function pageLimit(page: PageRequest | undefined): number {
  return Math.min(Math.max(page?.pageSize || DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
}

/** An opaque cursor holding the last slug of the previous page. */
export function encodeSlugCursor(slug: string): string {
  return Buffer.from(JSON.stringify({ slug }), 'utf8').toString('base64url');
}

/** Reads a cursor made by `encodeSlugCursor`; anything else is a 400 naming `cursor`. */
export function decodeSlugCursor(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { slug?: unknown } | null;
    if (value && typeof value.slug === 'string' && GATEWAY_SLUG.test(value.slug)) return value.slug;
  } catch {
    // falls through to the error below
  }
  throw AppError.invalid('The cursor is malformed; start again from the first page', [{ field: 'cursor', problem: 'malformed cursor' }]);
}
