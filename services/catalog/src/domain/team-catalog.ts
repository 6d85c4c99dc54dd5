import type { ListCatalogRequest, ListMcpServersResponse } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, effectivePublishPolicy } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { toMcpServer } from '../store/mcp-servers-mappers';
import { listCatalogRows } from '../store/team-catalog-store';
import { UUID } from './gateway-rules';
import { pageLimit } from './paging';
import { decodeSlugIdCursor, encodeSlugIdCursor } from './slug-id-cursor';
import { audienceOf } from './team-audience';

/**
 * A team's catalog (what it can put in its gateways now): its own servers and the platform servers offered to
 * it (to all teams, to it by name, or to personal workspaces when it is one), published and enabled, by slug
 * then id. Whether the team is a personal workspace is identity's answer (GetTeam).
 */
export async function listCatalog(deps: CatalogDeps, request: ListCatalogRequest): Promise<ListMcpServersResponse> {
  if (!UUID.test(request.teamId)) throw AppError.notFound('Team');
  const limit = pageLimit(request.page);
  const after = request.page?.cursor ? decodeSlugIdCursor(request.page.cursor) : null;
  const team = await deps.clients.identity.getTeam({ teamRef: request.teamId });
  const rows = await listCatalogRows(deps.db, audienceOf(team), after, limit);
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  // A server not the team's own is a platform server: the platform team's policy applies to it.
  const policyOf = (ownerTeamId: string) =>
    effectivePublishPolicy(ownerTeamId === team.id ? team : { kind: 'platform', publishingOverride: '' }, deps.config.env.MCP_PUBLISH_POLICY);
  return {
    servers: kept.map((row) => toMcpServer(row, policyOf(row.team_id))),
    page: { nextCursor: rows.length > limit && last ? encodeSlugIdCursor(last) : '' },
  };
}
