import type { Queryable } from '@platform/runtime';
import type { McpServerRow } from './mcp-servers-mappers';
import { MCP_SERVER_COLUMNS } from './mcp-servers-store';
import { offeredToTeamSql, type TeamAudience } from './visibility';

/** An exposed capability as the runtime query aggregates it: approved and unchanged, present upstream. */
export interface RuntimeCapabilityJson {
  kind: string;
  name: string;
  definition: Record<string, unknown>;
  fingerprint: string;
  /** When it was approved as it is (a JSON timestamp). */
  approvedAt: string;
}

/** A gateway's server as the data plane gets it: the server row, its prefix, and its exposable capabilities. */
export interface RuntimeServerRow extends McpServerRow {
  prefix: string;
  capabilities: RuntimeCapabilityJson[];
}

const KIND_ORDER = `CASE c.kind WHEN 'tool' THEN 1 WHEN 'resource' THEN 2 WHEN 'resource_template' THEN 3 ELSE 4 END`;
const SERVER_COLUMNS = MCP_SERVER_COLUMNS.split(',').map((column) => `s.${column.trim()}`).join(', ');

/**
 * The gateway's servers that are in its team's catalog now (enabled, published, offered to the team), in gateway
 * order, each with its present capabilities whose approved fingerprint is the current one. One query: the
 * capabilities are aggregated per server, so the data plane's resolution never costs a query per server.
 */
export async function listRuntimeServers(db: Queryable, gatewayId: string, audience: TeamAudience): Promise<RuntimeServerRow[]> {
  const { rows } = await db.query<RuntimeServerRow>(
    `SELECT ${SERVER_COLUMNS}, gs.prefix,
            COALESCE((
              SELECT jsonb_agg(jsonb_build_object('kind', c.kind, 'name', c.name, 'definition', c.definition,
                                                  'fingerprint', c.fingerprint, 'approvedAt', c.approved_at) ORDER BY ${KIND_ORDER}, c.name)
                FROM catalog.capabilities c
               WHERE c.server_id = s.id AND c.gone_at IS NULL AND c.approved_fingerprint = c.fingerprint), '[]'::jsonb) AS capabilities
       FROM catalog.gateway_servers gs
       JOIN catalog.mcp_servers s ON s.id = gs.server_id
      WHERE gs.gateway_id = $1 AND s.enabled AND s.publish_state = 'published'
        AND ${offeredToTeamSql('s', '$2', '$3')}
      ORDER BY gs.position`,
    [gatewayId, audience.teamId, audience.personal],
  );
  return rows;
}
