import type { Queryable } from '@platform/runtime';
import { kindOrderOf } from './capabilities-store';
import type { McpServerRow } from './mcp-servers-mappers';
import { MCP_SERVER_VIEW } from './mcp-servers-store';
import { healthResetWhen } from './health-store';
import { connectionChanges } from './upstream-connection';

/** A position in a list ordered by slug then id (slugs repeat across teams). */
export interface SlugIdPosition {
  slug: string;
  id: string;
}

/** The stored fields op 16 sets; headers arrive sealed. */
export interface AdminServerFields {
  name: string;
  description: string;
  url: string;
  accessMode: string;
  visibility: string;
  personal: boolean;
  enabled: boolean;
  /** undefined: keep the stored headers and credential; else the new sealed headers (null: none), the credential cleared. */
  headersSealed?: string | null;
}

export async function findMcpServerById(db: Queryable, id: string, forUpdate = false): Promise<McpServerRow | null> {
  const { rows } = await db.query<McpServerRow>(`SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

/**
 * Every team's servers (or one team's, or the one with `serverId`) by slug then id, after `after` when given;
 * one row more than `limit` tells a next page exists.
 */
export async function listAllMcpServerRows(
  db: Queryable,
  filter: { teamId: string | null; serverId: string | null },
  after: SlugIdPosition | null,
  limit: number,
): Promise<McpServerRow[]> {
  const { rows } = await db.query<McpServerRow>(
    `SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers
      WHERE ($1::uuid IS NULL OR team_id = $1::uuid) AND ($2::uuid IS NULL OR id = $2::uuid)
        AND ($3::text IS NULL OR (slug, id) > ($3::text, $4::uuid))
      ORDER BY slug, id LIMIT $5`,
    [filter.teamId, filter.serverId, after?.slug ?? null, after?.id ?? null, limit + 1],
  );
  return rows;
}

/** Writes op 16's fields when the revision still matches; null when it does not. New headers clear the single credential. */
export async function updateAdminServerRow(db: Queryable, id: string, expectedRevision: string, fields: AdminServerFields): Promise<McpServerRow | null> {
  const replaceHeaders = fields.headersSealed !== undefined;
  const { rows } = await db.query<McpServerRow>(
    `UPDATE catalog.mcp_servers
        SET ${healthResetWhen(
              connectionChanges({
                url: '$5',
                headers_sealed: 'CASE WHEN $10::boolean THEN $11::text ELSE headers_sealed END',
                auth_header_name: 'CASE WHEN $10::boolean THEN NULL ELSE auth_header_name END',
                auth_value_sealed: 'CASE WHEN $10::boolean THEN NULL ELSE auth_value_sealed END',
              }),
            )},
            name = $3, description = $4, url = $5, access_mode = $6, visibility = $7, personal = $8, enabled = $9,
            headers_sealed = CASE WHEN $10::boolean THEN $11::text ELSE headers_sealed END,
            auth_header_name = CASE WHEN $10::boolean THEN NULL ELSE auth_header_name END,
            auth_value_sealed = CASE WHEN $10::boolean THEN NULL ELSE auth_value_sealed END,
            auth_value_hint = CASE WHEN $10::boolean THEN NULL ELSE auth_value_hint END,
            revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $2
      RETURNING ${MCP_SERVER_VIEW}`,
    [
      id,
      expectedRevision,
      fields.name,
      fields.description,
      fields.url,
      fields.accessMode,
      fields.visibility,
      fields.personal,
      fields.enabled,
      replaceHeaders,
      fields.headersSealed ?? null,
    ],
  );
  return rows[0] ?? null;
}

/** The teams each server is offered to by name (visibility `teams`), for many servers in one query. */
export async function visibleTeamIdsOf(db: Queryable, serverIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  if (serverIds.length === 0) return result;
  const { rows } = await db.query<{ server_id: string; team_id: string }>(
    'SELECT server_id, team_id FROM catalog.mcp_server_teams WHERE server_id = ANY($1::uuid[]) ORDER BY server_id, team_id',
    [serverIds],
  );
  for (const row of rows) pushTo(result, row.server_id, row.team_id);
  return result;
}

/** Appends to the list under `key` in place (copying it at each row made grouping quadratic). */
function pushTo<T>(groups: Map<string, T[]>, key: string, item: T): void {
  const group = groups.get(key);
  if (group) group.push(item);
  else groups.set(key, [item]);
}

export async function replaceVisibleTeams(db: Queryable, serverId: string, teamIds: readonly string[]): Promise<void> {
  await db.query('DELETE FROM catalog.mcp_server_teams WHERE server_id = $1', [serverId]);
  if (teamIds.length === 0) return;
  await db.query('INSERT INTO catalog.mcp_server_teams (server_id, team_id) SELECT $1, unnest($2::uuid[])', [serverId, teamIds]);
}

export interface ToolSummaryRow {
  server_id: string;
  name: string;
  title: string;
  description: string;
}

/**
 * What the admin view (§2.4) shows of a server's tools (docs/catalog.md, Admin view): the first `perServer` by name,
 * their texts cut to so many characters, and no more of them than `bytesPerServer` of UTF-8 text in all (100 tools cut
 * as above take at most 140,000 bytes when ASCII, so only texts of multi-byte characters ever meet it). A page holds
 * up to 200 servers of any teams, so its tools stay under 40 MiB, within the largest message the services send one
 * another (64 MiB); what one upstream lists is bounded only by discovery (10,000 capabilities, 16 MiB), so shown
 * whole, one team's servers could push a page past it and fail the list for every platform admin.
 */
export const ADMIN_VIEW_TOOLS = { perServer: 100, nameChars: 200, titleChars: 200, descriptionChars: 1_000, bytesPerServer: 192 * 1024 } as const;

/**
 * The present (not gone) tools of many servers in one query, by name, as ADMIN_VIEW_TOOLS allows: cut and counted in
 * SQL, so the rest is never read (each server's first ones through migration 0013's index of present capabilities).
 */
export async function presentToolsOf(db: Queryable, serverIds: readonly string[]): Promise<Map<string, ToolSummaryRow[]>> {
  const result = new Map<string, ToolSummaryRow[]>();
  if (serverIds.length === 0) return result;
  const { rows } = await db.query<ToolSummaryRow>(
    `SELECT s.id AS server_id, t.name, t.title, t.description
       FROM unnest($1::uuid[]) AS s (id)
       CROSS JOIN LATERAL (
         SELECT listed.*, sum(octet_length(listed.name) + octet_length(listed.title) + octet_length(listed.description))
                            OVER (ORDER BY listed.place) AS bytes_through
           FROM (
             SELECT left(c.name, $3) AS name, left(c.title, $4) AS title, left(c.description, $5) AS description,
                    row_number() OVER (ORDER BY c.name, c.id) AS place
               FROM catalog.capabilities c
              WHERE c.server_id = s.id AND c.gone_at IS NULL AND ${kindOrderOf('c.kind')} = 1
              ORDER BY c.name, c.id LIMIT $2
           ) listed
       ) t
      WHERE t.bytes_through <= $6
      ORDER BY s.id, t.place`,
    [
      serverIds,
      ADMIN_VIEW_TOOLS.perServer,
      ADMIN_VIEW_TOOLS.nameChars,
      ADMIN_VIEW_TOOLS.titleChars,
      ADMIN_VIEW_TOOLS.descriptionChars,
      ADMIN_VIEW_TOOLS.bytesPerServer,
    ],
  );
  for (const row of rows) pushTo(result, row.server_id, row);
  return result;
}
