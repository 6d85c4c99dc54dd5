import type { Queryable } from '@platform/runtime';
import type { McpServerRow } from './mcp-servers-mappers';
import { MCP_SERVER_VIEW } from './mcp-servers-store';
import type { SlugIdPosition } from './platform-servers-store';
import { offeredToTeamSql, type TeamAudience } from './visibility';

/**
 * A team's catalog by slug then id, after `after` when given: enabled, published servers offered to the team (its
 * own, and platform servers offered to it). One row more than `limit` tells a next page exists.
 */
export async function listCatalogRows(db: Queryable, audience: TeamAudience, after: SlugIdPosition | null, limit: number): Promise<McpServerRow[]> {
  const { rows } = await db.query<McpServerRow>(
    `SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers
      WHERE enabled AND publish_state = 'published' AND ${offeredToTeamSql('mcp_servers', '$1::uuid', '$2')}
        AND ($3::text IS NULL OR (slug, id) > ($3::text, $4::uuid))
      ORDER BY slug, id LIMIT $5`,
    [audience.teamId, audience.personal, after?.slug ?? null, after?.id ?? null, limit + 1],
  );
  return rows;
}
