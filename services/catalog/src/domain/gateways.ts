import { randomUUID } from 'node:crypto';
import type {
  CreateGatewayRequest,
  Gateway,
  GetGatewayRequest,
  ListGatewaysRequest,
  ListGatewaysResponse,
} from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, auditContext, writeAuditEvent } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import {
  findTeamGatewayById,
  findTeamGatewayBySlug,
  gatewaySlugTaken,
  insertGateway,
  isUniqueViolation,
  listTeamGateways,
} from '../store/gateways-store';
import { toGateway, type GatewayRow } from '../store/mappers';
import { isGatewaySlug, UUID, validNewGateway } from './gateway-rules';
import { decodeSlugCursor, encodeSlugCursor, pageLimit } from './paging';

const SLUG_TAKEN = () => AppError.conflict('A gateway with this slug already exists');

/** What an audit entry records of a gateway. */
function auditView(row: GatewayRow): Record<string, unknown> {
  return { slug: row.slug, name: row.name, enabled: row.enabled };
}

/**
 * Creates a gateway of a team. The team is identity's: asked over gRPC, it must exist and not be archived.
 * Slugs are unique across the installation (the gateway is served at /mcp/{slug}). Audited `gateway.create`.
 */
export async function createGateway(deps: CatalogDeps, request: CreateGatewayRequest): Promise<Gateway> {
  const { slug, name } = validNewGateway(request);
  if (!UUID.test(request.teamId)) throw AppError.notFound('Team');
  const team = await deps.clients.identity.getTeam({ teamRef: request.teamId });
  if (team.archived) throw new AppError('team_archived', 'The team is archived');

  try {
    const row = await deps.db.transaction(async (tx) => {
      if (await gatewaySlugTaken(tx, slug)) throw SLUG_TAKEN();
      const created = await insertGateway(tx, {
        id: randomUUID(),
        teamId: team.id,
        slug,
        name,
        enabled: request.enabled,
        createdBy: request.context?.actor?.userId || null,
      });
      await writeAuditEvent(tx, SCHEMA, {
        ...auditContext(request.context),
        teamId: team.id,
        action: 'gateway.create',
        target: { type: 'gateway', id: created.id, label: created.slug },
        after: auditView(created),
      });
      return created;
    });
    return toGateway(row);
  } catch (error) {
    // Two concurrent creates of one slug: the unique index refuses the second.
    throw isUniqueViolation(error) ? SLUG_TAKEN() : error;
  }
}

/** A team's gateways in slug order, keyset-paged on the slug (unique, so it alone marks the position). */
export async function listGateways(deps: CatalogDeps, request: ListGatewaysRequest): Promise<ListGatewaysResponse> {
  const limit = pageLimit(request.page);
  const after = request.page?.cursor ? decodeSlugCursor(request.page.cursor) : null;
  if (!UUID.test(request.teamId)) return { gateways: [], page: { nextCursor: '' } };
  const rows = await listTeamGateways(deps.db, request.teamId, after, limit);
  const kept = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeSlugCursor(kept[kept.length - 1]!.slug) : '';
  return { gateways: kept.map(toGateway), page: { nextCursor } };
}

/** A gateway of the team by id or slug; 404 when the team has none such (another team's gateway included). */
export async function getGateway(deps: CatalogDeps, request: GetGatewayRequest): Promise<Gateway> {
  const ref = request.gatewayRef;
  let row: GatewayRow | null = null;
  if (UUID.test(request.teamId)) {
    if (UUID.test(ref)) row = await findTeamGatewayById(deps.db, request.teamId, ref.toLowerCase());
    else if (isGatewaySlug(ref)) row = await findTeamGatewayBySlug(deps.db, request.teamId, ref);
  }
  if (!row) throw AppError.notFound('Gateway');
  return toGateway(row);
}
