import type {
  AdminUpdateMcpServerRequest,
  ListAllMcpServersRequest,
  ListMcpServersResponse,
  McpServer,
} from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError, auditContext, parseAllowedNetworks, writeAuditEvent } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import { hasStoredSecret, toMcpServer, type McpServerRow } from '../store/mcp-servers-mappers';
import {
  findMcpServerById,
  listAllMcpServerRows,
  presentToolsOf,
  replaceVisibleTeams,
  updateAdminServerRow,
  visibleTeamIdsOf,
  type AdminServerFields,
} from '../store/platform-servers-store';
import { UUID } from './gateway-rules';
import { assertMcpServerUrlAllowed } from './mcp-servers-rules';
import { pageLimit } from './paging';
import { assertTeamServerStaysPrivate, isTeamServer, validAdminChange, type AdminChange } from './platform-server-rules';
import { assertAdminMoveKeepsSecretsHome } from './secret-origin';
import { decodeSlugIdCursor, encodeSlugIdCursor } from './slug-id-cursor';
import { resolveTeamRefs } from './team-refs';
import { announceServerExposureChange } from './refresh-exposure';

const NOT_FOUND = () => AppError.notFound('MCP server');
const STALE = () => new AppError('precondition_failed', 'The MCP server has changed since it was read');

/** The admin view (§2.4) of servers: each with the teams it is offered to and its present tools, in two queries. */
async function adminViews(deps: CatalogDeps, rows: readonly McpServerRow[]): Promise<McpServer[]> {
  const platformIds = rows.filter((row) => !isTeamServer(row.team_id)).map((row) => row.id);
  const ids = rows.map((row) => row.id);
  const [visible, tools] = await Promise.all([visibleTeamIdsOf(deps.db, platformIds), presentToolsOf(deps.db, ids)]);
  return rows.map((row) => {
    const server = toMcpServer(row);
    return {
      ...server,
      visibleTeamIds: isTeamServer(row.team_id) ? server.visibleTeamIds : (visible.get(row.id) ?? []),
      tools: (tools.get(row.id) ?? []).map(({ name, title, description }) => ({ name, title, description })),
    };
  });
}

/** Every team's servers (optionally one team's, or one server) by slug then id, keyset-paged. */
export async function listAllMcpServers(deps: CatalogDeps, request: ListAllMcpServersRequest): Promise<ListMcpServersResponse> {
  const limit = pageLimit(request.page);
  const after = request.page?.cursor ? decodeSlugIdCursor(request.page.cursor) : null;
  const teamId = request.teamId || null;
  const serverId = request.serverId || null;
  // An id that cannot exist matches nothing (the edge answers 404 for a single server).
  if ((teamId && !UUID.test(teamId)) || (serverId && !UUID.test(serverId))) return { servers: [], page: { nextCursor: '' } };
  const rows = await listAllMcpServerRows(deps.db, { teamId, serverId }, after, limit);
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  const nextCursor = rows.length > limit && last ? encodeSlugIdCursor(last) : '';
  return { servers: await adminViews(deps, kept), page: { nextCursor } };
}

/** What an audit entry records of a server in the admin view: never a header value, only whether headers exist. */
function auditView(row: McpServerRow, visibleTeamIds: readonly string[]): Record<string, unknown> {
  return {
    name: row.name,
    description: row.description,
    url: row.url,
    accessMode: row.access_mode,
    visibility: row.visibility,
    personal: row.personal,
    visibleTeamIds,
    enabled: row.enabled,
    hasHeaders: hasStoredSecret(row),
  };
}

/** The names of the fields a change really altered (headers: whenever they are replaced or removed). */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>, headersReplaced: boolean): string[] {
  const changed = Object.keys(before).filter((key) => key !== 'hasHeaders' && JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  return headersReplaced ? [...changed, 'headers'] : changed;
}

function sealedHeaders(deps: CatalogDeps, serverId: string, headers: Record<string, string> | null): Pick<AdminServerFields, 'headersSealed'> {
  if (headers === null) return {};
  // Sealed as one JSON object bound to the row id, as upstreamHeadersOf reads it; an empty map removes them.
  return { headersSealed: Object.keys(headers).length === 0 ? null : deps.secrets.secretBox.encrypt(JSON.stringify(headers), serverId) };
}

/** The row as it would read with the merged fields: what the audit view compares before writing anything. */
function withFields(row: McpServerRow, fields: Omit<AdminServerFields, 'headersSealed'>): McpServerRow {
  const { name, description, url, accessMode, visibility, personal, enabled } = fields;
  return { ...row, name, description, url, access_mode: accessMode, visibility, personal, enabled };
}

function mergedFields(current: McpServerRow, change: AdminChange): Omit<AdminServerFields, 'headersSealed'> {
  return {
    name: change.name ?? current.name,
    description: change.description ?? current.description,
    url: change.url ?? current.url,
    accessMode: change.accessMode ?? current.access_mode,
    visibility: change.visibility ?? current.visibility,
    personal: change.personal ?? current.personal,
    enabled: change.enabled ?? current.enabled,
  };
}

/**
 * Op 16: a platform admin changes any server at the expected revision (412 when stale). A team's own server stays
 * proxy-only and visible to its team only (400 `team_mcp_visibility`); a new URL passes the address guard (422),
 * and takes no stored secret to another origin that the change does not give again (secret-origin.ts).
 * Headers replace all (and the single credential header); an empty map removes them. Audited
 * `mcp_server.admin_update` on the server's team with the names of the changed fields, never a header value; a
 * change that alters nothing writes nothing.
 */
export async function adminUpdateMcpServer(deps: CatalogDeps, request: AdminUpdateMcpServerRequest): Promise<McpServer> {
  if (!UUID.test(request.serverId)) throw NOT_FOUND();
  const serverId = request.serverId.toLowerCase();
  const change = validAdminChange(request);
  const current = await findMcpServerById(deps.db, serverId);
  if (!current) throw NOT_FOUND();
  const teamIds = change.teamRefs === null ? null : await resolveTeamRefs(deps, change.teamRefs);
  assertTeamServerStaysPrivate(current.team_id, change, teamIds);
  if (change.url !== undefined) await assertMcpServerUrlAllowed(change.url, parseAllowedNetworks(deps.config.env.ALLOWED_INTERNAL_NETWORKS));

  const updated = await deps.db.transaction(async (tx) => {
    const locked = await findMcpServerById(tx, serverId, true);
    if (!locked) throw NOT_FOUND();
    if (String(locked.revision) !== String(request.expectedRevision)) throw STALE();
    assertAdminMoveKeepsSecretsHome(locked, change.url ?? locked.url, change.headers !== null);
    const teamServer = isTeamServer(locked.team_id);
    const visibleBefore = teamServer ? [locked.team_id] : (await visibleTeamIdsOf(tx, [serverId])).get(serverId) ?? [];
    // A team's own server keeps an empty list: it is offered to its team by ownership.
    const visibleAfter = teamIds === null || teamServer ? visibleBefore : [...new Set(teamIds)].sort();
    const fields = mergedFields(locked, change);
    const before = auditView(locked, visibleBefore);
    // Headers given are always a change (never compared with the stored ones), unless `{}` removes none.
    const headersReplaced = change.headers !== null && (Object.keys(change.headers).length > 0 || before.hasHeaders === true);
    // A change that alters nothing keeps the revision and writes no entry (docs/api.md, Revisions).
    if (changedFields(before, auditView(withFields(locked, fields), visibleAfter), headersReplaced).length === 0) return { row: locked, altered: false };
    const row = await updateAdminServerRow(tx, serverId, String(request.expectedRevision), { ...fields, ...sealedHeaders(deps, serverId, change.headers) });
    if (!row) throw STALE();
    if (teamIds !== null && !teamServer) await replaceVisibleTeams(tx, serverId, visibleAfter);
    const after = auditView(row, visibleAfter);
    await writeAuditEvent(tx, SCHEMA, {
      ...auditContext(request.context),
      teamId: row.team_id,
      action: 'mcp_server.admin_update',
      target: { type: 'mcp_server', id: row.id, label: row.slug },
      before,
      after,
      metadata: { changed: changedFields(before, after, headersReplaced) },
    });
    return { row, altered: true };
  });
  // What gateways expose may change (visibility, url, headers, enabled): edges drop what they resolved of the
  // gateways naming it (a team no longer offered it still names it until its gateway changes).
  if (updated.altered) await announceServerExposureChange(deps, updated.row.id);
  const [view] = await adminViews(deps, [updated.row]);
  return view!;
}
