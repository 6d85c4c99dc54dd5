import type { Queryable } from '@platform/runtime';
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
  for (const row of rows) result.set(row.server_id, [...(result.get(row.server_id) ?? []), row.team_id]);
  return result;
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

/** The present (not gone) tools of many servers in one query, by name. */
export async function presentToolsOf(db: Queryable, serverIds: readonly string[]): Promise<Map<string, ToolSummaryRow[]>> {
  const result = new Map<string, ToolSummaryRow[]>();
  if (serverIds.length === 0) return result;
  const { rows } = await db.query<ToolSummaryRow>(
    `SELECT server_id, name, title, description FROM catalog.capabilities
      WHERE server_id = ANY($1::uuid[]) AND kind = 'tool' AND gone_at IS NULL ORDER BY server_id, name`,
    [serverIds],
  );
  for (const row of rows) result.set(row.server_id, [...(result.get(row.server_id) ?? []), row]);
  return result;
}
