import { decodeCursor, encodeCursor } from '@platform/runtime';
import type { SlugIdPosition } from '../store/platform-servers-store';
import { GATEWAY_SLUG, UUID } from './gateway-rules';

/** The cursor of lists spanning teams (slugs repeat there): the last slug and id of the previous page. */
export const encodeSlugIdCursor = (position: SlugIdPosition): string => encodeCursor({ slug: position.slug, id: position.id });

export function decodeSlugIdCursor(cursor: string): SlugIdPosition {
  return decodeCursor(cursor, (value) => {
    const position = value as Partial<SlugIdPosition> | null;
    return position && typeof position.slug === 'string' && GATEWAY_SLUG.test(position.slug) && typeof position.id === 'string' && UUID.test(position.id)
      ? { slug: position.slug, id: position.id }
      : null;
  });
}
