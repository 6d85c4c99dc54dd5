import type { ListConnectionsRequest, ListConnectionsResponse, OAuthConnection } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { IdentityDeps } from '../../deps';
import { pageOf, pagePosition } from '../../store/api-keys-store';
import { iso } from '../../store/mappers';
import { listActiveConnections, type ConnectionRow } from '../../store/oauth-grants-store';
import { UUID } from './validation';

export function toConnection(row: ConnectionRow): OAuthConnection {
  return {
    id: row.id,
    personId: row.person_id,
    clientId: row.client_id,
    clientName: row.client_name,
    clientVerified: row.client_verified,
    gatewayId: row.gateway_id,
    gatewaySlug: row.gateway_slug,
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

/** A person's connected apps: connections not revoked that still hold a live token, newest first. */
export async function listConnections(deps: IdentityDeps, request: ListConnectionsRequest): Promise<ListConnectionsResponse> {
  const page = pagePosition(request.page);
  if (!UUID.test(request.personId)) return { connections: [], page: { nextCursor: '' } };
  const result = pageOf(await listActiveConnections(deps.db, request.personId, page), page);
  return { connections: result.rows.map(toConnection), page: { nextCursor: result.nextCursor } };
}
