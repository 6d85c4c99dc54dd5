import { randomUUID } from 'node:crypto';
import type {
  CreateGatewayRequest,
  DeleteGatewayRequest,
  DeleteGatewayResponse,
  Gateway,
  GetGatewayRequest,
  ListGatewaysRequest,
  ListGatewaysResponse,
  UpdateGatewayRequest,
} from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, catalogChangeCommitted, auditContext, writeAuditEvent, type Queryable, type Transaction } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import {
  deleteGatewayRow,
  findGatewayById,
  findTeamGatewayById,
  findTeamGatewayBySlug,
  gatewaySlugTaken,
  insertGateway,
  isUniqueViolation,
  listTeamGateways,
  replaceGatewayServers,
  updateGatewayRow,
  type GatewayServerEntry,
} from '../store/gateways-store';
import { toGateway, type GatewayRow } from '../store/mappers';
import type { TeamAudience } from '../store/visibility';
import { composeGatewayServers } from './gateway-composition';
import { isGatewaySlug, UUID, validNewGateway, validServerChoices } from './gateway-rules';
import { decodeSlugCursor, encodeSlugCursor, pageLimit } from './paging';
import { audienceOf } from './team-audience';

const SLUG_TAKEN = () => AppError.conflict('A gateway with this slug already exists');
const NOT_FOUND = () => AppError.notFound('Gateway');
const STALE = () => new AppError('precondition_failed', 'The gateway has changed since it was read');

/** What an audit entry records of a gateway. */
function auditView(row: GatewayRow): Record<string, unknown> {
  return {
    slug: row.slug,
    name: row.name,
    enabled: row.enabled,
    servers: row.servers.map((server) => ({ serverId: server.server_id, prefix: server.prefix })),
  };
}

/** Only the fields that differ, before and after: what `gateway.update` records. */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>) {
  const changed = Object.keys(after).filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  return { before: Object.fromEntries(changed.map((key) => [key, before[key]])), after: Object.fromEntries(changed.map((key) => [key, after[key]])) };
}

/** Whether a change sets anything the gateway does not have already (its server list in order, prefixes included). */
function alters(current: GatewayRow, fields: { slug: string; name: string; enabled: boolean }, servers: readonly GatewayServerEntry[] | null): boolean {
  if (fields.slug !== current.slug || fields.name !== current.name || fields.enabled !== current.enabled) return true;
  if (servers === null) return false;
  const listed = (list: readonly { serverId: string; prefix: string }[]) => JSON.stringify(list.map(({ serverId, prefix }) => [serverId, prefix]));
  return listed(servers) !== listed(current.servers.map((server) => ({ serverId: server.server_id, prefix: server.prefix })));
}

async function audit(tx: Transaction, context: RequestContext | undefined, action: string, row: GatewayRow, change: Record<string, unknown>) {
  await writeAuditEvent(tx, SCHEMA, {
    ...auditContext(context),
    teamId: row.team_id,
    action,
    target: { type: 'gateway', id: row.id, label: row.slug },
    ...change,
  });
}

/** The gateway's team from identity: it must exist and, for changes, not be archived. */
async function writableTeam(deps: CatalogDeps, teamId: string): Promise<TeamAudience> {
  if (!UUID.test(teamId)) throw AppError.notFound('Team');
  const team = await deps.clients.identity.getTeam({ teamRef: teamId });
  if (team.archived) throw new AppError('team_archived', 'The team is archived');
  return audienceOf(team);
}

/** A gateway of the team by id or slug; null when the team has none such (another team's gateway included). */
async function findTeamGateway(db: Queryable, teamId: string, ref: string, forUpdate = false): Promise<GatewayRow | null> {
  if (!UUID.test(teamId)) return null;
  if (UUID.test(ref)) return findTeamGatewayById(db, teamId, ref.toLowerCase(), forUpdate);
  if (isGatewaySlug(ref)) return findTeamGatewayBySlug(db, teamId, ref, forUpdate);
  return null;
}

/**
 * Creates a gateway of a team with its servers (docs/catalog.md, Gateways). The team is identity's: it must exist
 * and not be archived. Slugs are unique across the installation (the gateway is served at /mcp/{slug}). Audited
 * `gateway.create`.
 */
export async function createGateway(deps: CatalogDeps, request: CreateGatewayRequest): Promise<Gateway> {
  const { slug, name } = validNewGateway(request);
  const choices = validServerChoices(request.servers);
  const audience = await writableTeam(deps, request.teamId);

  try {
    const row = await deps.db.transaction(async (tx) => {
      if (await gatewaySlugTaken(tx, slug)) throw SLUG_TAKEN();
      const servers = await composeGatewayServers(tx, audience, choices);
      const id = randomUUID();
      await insertGateway(tx, { id, teamId: audience.teamId, slug, name, enabled: request.enabled, createdBy: request.context?.actor?.userId || null });
      await replaceGatewayServers(tx, id, servers);
      const created = (await findGatewayById(tx, id))!;
      await audit(tx, request.context, 'gateway.create', created, { after: auditView(created) });
      return created;
    });
    await catalogChangeCommitted(deps, [row.id]);
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
  const row = await findTeamGateway(deps.db, request.teamId, request.gatewayRef);
  if (!row) throw NOT_FOUND();
  return toGateway(row);
}

/**
 * Changes a gateway at the expected revision (412 when stale): slug, name, enabled, and (with replace_servers)
 * its whole server list, checked as on create. Audited `gateway.update` with the changed fields only; a change that
 * alters nothing answers the gateway as it is, with no revision move, entry or announcement.
 */
export async function updateGateway(deps: CatalogDeps, request: UpdateGatewayRequest): Promise<Gateway> {
  const audience = await writableTeam(deps, request.teamId);
  const choices = request.replaceServers ? validServerChoices(request.servers) : null;

  try {
    const row = await deps.db.transaction(async (tx) => {
      const current = await findTeamGateway(tx, audience.teamId, request.gatewayRef, true);
      if (!current) throw NOT_FOUND();
      if (String(current.revision) !== request.expectedRevision) throw STALE();
      // Absent fields stay; the stored ones are valid, so this checks only what the change sets.
      const named = validNewGateway({ slug: request.slug ?? current.slug, name: request.name ?? current.name });
      const fields = { ...named, enabled: request.enabled ?? current.enabled };
      if (fields.slug !== current.slug && (await gatewaySlugTaken(tx, fields.slug, current.id))) throw SLUG_TAKEN();
      // Composed (and so checked) even when it is the list already there: a server no longer offered is still refused.
      const servers = choices ? await composeGatewayServers(tx, audience, choices) : null;
      // A change that alters nothing keeps the revision and writes no entry (docs/api.md, Revisions).
      if (!alters(current, fields, servers)) return { updated: current, altered: false };
      if (servers) await replaceGatewayServers(tx, current.id, servers);
      if (!(await updateGatewayRow(tx, current.id, request.expectedRevision, fields))) throw STALE();
      const updated = (await findGatewayById(tx, current.id))!;
      await audit(tx, request.context, 'gateway.update', updated, changedFields(auditView(current), auditView(updated)));
      return { updated, altered: true };
    });
    if (row.altered) await catalogChangeCommitted(deps, [row.updated.id]);
    return toGateway(row.updated);
  } catch (error) {
    throw isUniqueViolation(error) ? SLUG_TAKEN() : error;
  }
}

/** Deletes a gateway of the team (its server list goes with it). Audited `gateway.delete`. */
export async function deleteGateway(deps: CatalogDeps, request: DeleteGatewayRequest): Promise<DeleteGatewayResponse> {
  const audience = await writableTeam(deps, request.teamId);
  const row = await deps.db.transaction(async (tx) => {
    const current = await findTeamGateway(tx, audience.teamId, request.gatewayRef, true);
    if (!current) throw NOT_FOUND();
    await deleteGatewayRow(tx, current.id);
    await audit(tx, request.context, 'gateway.delete', current, { before: auditView(current) });
    return current;
  });
  await catalogChangeCommitted(deps, [row.id]);
  return {};
}
