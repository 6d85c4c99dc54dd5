import type { ListCapabilitiesResponse } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { PageRequest } from '@platform/proto/gen/platform/common/v1/common';
import { decodeCursor, encodeCursor, malformedCursor, type Queryable } from '@platform/runtime';
import { findServerCapability, listCapabilityPage, toCapability, type CapabilityPosition } from '../store/capabilities-store';
import { UUID } from './gateway-rules';
import { pageLimit } from './paging';

/**
 * The cursor names the last capability of the previous page by its id alone; the rest of its position (kind and
 * name, which an id keeps for ever) is read back from the row. Names come from upstreams and may be long (a
 * resource's URI): a cursor holding one could outgrow what the edge accepts as a cursor.
 */
const encodeCapabilityCursor = (id: string): string => encodeCursor({ id });

function decodeCapabilityCursor(cursor: string): string {
  return decodeCursor(cursor, (value) => {
    const id = (value as { id?: unknown } | null)?.id;
    return typeof id === 'string' && UUID.test(id) ? id : null;
  });
}

/** The position a cursor names: one naming no capability of this server was not made by this list (400). */
async function positionOf(db: Queryable, serverId: string, cursor: string): Promise<CapabilityPosition> {
  const row = await findServerCapability(db, serverId, decodeCapabilityCursor(cursor));
  if (!row) throw malformedCursor();
  return row;
}

/** A page of the server's capabilities by kind, name and id; gone ones only when asked for. */
export async function capabilityPage(
  db: Queryable,
  serverId: string,
  includeGone: boolean,
  page: PageRequest | undefined,
): Promise<ListCapabilitiesResponse> {
  const limit = pageLimit(page);
  const after = page?.cursor ? await positionOf(db, serverId, page.cursor) : null;
  const rows = await listCapabilityPage(db, serverId, { includeGone, after, limit });
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  return {
    capabilities: kept.map(toCapability),
    page: { nextCursor: rows.length > limit && last ? encodeCapabilityCursor(last.id) : '' },
  };
}
