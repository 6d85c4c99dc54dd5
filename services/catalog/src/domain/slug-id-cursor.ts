import { AppError } from '@platform/runtime';
import type { SlugIdPosition } from '../store/platform-servers-store';
import { GATEWAY_SLUG, UUID } from './gateway-rules';

/** An opaque cursor holding the last slug and id of the previous page (lists spanning teams, where slugs repeat). */
export function encodeSlugIdCursor(position: SlugIdPosition): string {
  return Buffer.from(JSON.stringify({ slug: position.slug, id: position.id }), 'utf8').toString('base64url');
}

/** Reads a cursor made by `encodeSlugIdCursor`; anything else is a 400 naming `cursor`. */
export function decodeSlugIdCursor(cursor: string): SlugIdPosition {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<SlugIdPosition> | null;
    if (value && typeof value.slug === 'string' && GATEWAY_SLUG.test(value.slug) && typeof value.id === 'string' && UUID.test(value.id)) {
      return { slug: value.slug, id: value.id };
    }
  } catch {
    // falls through to the error below
  }
  throw AppError.invalid('The cursor is malformed; start again from the first page', [{ field: 'cursor', problem: 'malformed cursor' }]);
}
