import type { Queryable } from '@platform/runtime';
import { capabilitiesFingerprintSql } from '../domain/capabilities-fingerprint';
import type { McpServerRow } from './mcp-servers-mappers';
import { healthResetWhen } from './health-store';
import { connectionChanges } from './upstream-connection';

export const MCP_SERVER_COLUMNS = `id, team_id, slug, name, description, url, transport, auth_header_name, auth_value_sealed, auth_value_hint,
  timeout_seconds, enabled, send_identity, capture_payloads, publish_state, access_mode, visibility, personal, headers_sealed,
  revision, created_by, created_at, updated_at, refreshed_at, last_refresh_error, publish_requested_at, publish_request_note,
  publish_reviewed_at, publish_reviewed_by, publish_reviewed_by_name, publish_review_note,
  health_status, health_checked_at, health_status_since, health_latency_ms, health_error_class, health_sign_in_required, health_message`;

/**
 * The server view's aggregates over its capabilities as one json column, `capability_summary` (McpServerRow):
 * present ones by kind, `pending`, present ones not approved as they are now (new, or changed since approval), and
 * `fingerprint`, their digest (domain/capabilities-fingerprint.ts).
 * `server` is how the query names the mcp_servers row (an alias, or `mcp_servers`). A correlated subquery on the
 * (server_id, kind, name) index: lists cost no query per server.
 */
export function capabilitySummarySql(server: string): string {
  return `(SELECT json_build_object(
      'tools', count(*) FILTER (WHERE c.kind = 'tool'),
      'resources', count(*) FILTER (WHERE c.kind = 'resource'),
      'resource_templates', count(*) FILTER (WHERE c.kind = 'resource_template'),
      'prompts', count(*) FILTER (WHERE c.kind = 'prompt'),
      'pending', count(*) FILTER (WHERE c.approved_fingerprint IS DISTINCT FROM c.fingerprint),
      'fingerprint', ${capabilitiesFingerprintSql('c')})
    FROM catalog.capabilities c WHERE c.server_id = ${server}.id AND c.gone_at IS NULL) AS capability_summary`;
}

/** The columns of a server's full view, in a statement on catalog.mcp_servers without an alias. */
export const MCP_SERVER_VIEW = `${MCP_SERVER_COLUMNS}, ${capabilitySummarySql('mcp_servers')}`;

/** The stored fields of a server that creating and changing set; the credential arrives already sealed. */
export interface McpServerFields {
  slug: string;
  name: string;
  description: string;
  url: string;
  transport: string;
  authHeaderName: string | null;
  authValueSealed: string | null;
  authValueHint: string | null;
  timeoutSeconds: number;
  enabled: boolean;
  sendIdentity: boolean;
  capturePayloads: boolean;
}

function values(fields: McpServerFields): unknown[] {
  return [
    fields.slug,
    fields.name,
    fields.description,
    fields.url,
    fields.transport,
    fields.authHeaderName,
    fields.authValueSealed,
    fields.authValueHint,
    fields.timeoutSeconds,
    fields.enabled,
    fields.sendIdentity,
    fields.capturePayloads,
  ];
}

export async function insertMcpServer(db: Queryable, id: string, teamId: string, createdBy: string | null, fields: McpServerFields): Promise<McpServerRow> {
  const { rows } = await db.query<McpServerRow>(
    `INSERT INTO catalog.mcp_servers (id, team_id, created_by, slug, name, description, url, transport, auth_header_name,
       auth_value_sealed, auth_value_hint, timeout_seconds, enabled, send_identity, capture_payloads)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     RETURNING ${MCP_SERVER_VIEW}`,
    [id, teamId, createdBy, ...values(fields)],
  );
  return rows[0]!;
}

/** Writes every field when the revision still matches; null when it does not (or the row is gone). */
export async function updateMcpServerRow(db: Queryable, id: string, expectedRevision: string, fields: McpServerFields): Promise<McpServerRow | null> {
  const { rows } = await db.query<McpServerRow>(
    `UPDATE catalog.mcp_servers
        SET ${healthResetWhen(connectionChanges({ url: '$6', transport: '$7', auth_header_name: '$8', auth_value_sealed: '$9' }))},
            slug = $3, name = $4, description = $5, url = $6, transport = $7, auth_header_name = $8,
            auth_value_sealed = $9, auth_value_hint = $10, timeout_seconds = $11, enabled = $12, send_identity = $13,
            capture_payloads = $14, revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $2
      RETURNING ${MCP_SERVER_VIEW}`,
    [id, expectedRevision, ...values(fields)],
  );
  return rows[0] ?? null;
}

/**
 * Deletes the server and the places gateways gave it; returns the ids of those gateways (whatever their team), read
 * in the deleting transaction so that none is missed: after the commit their rows are gone.
 */
export async function deleteMcpServerRow(db: Queryable, id: string): Promise<string[]> {
  const { rows } = await db.query<{ gateway_id: string }>('DELETE FROM catalog.gateway_servers WHERE server_id = $1 RETURNING gateway_id', [id]);
  await db.query('DELETE FROM catalog.mcp_servers WHERE id = $1', [id]);
  return rows.map((row) => row.gateway_id);
}

export async function findTeamMcpServer(db: Queryable, teamId: string, id: string, forUpdate = false): Promise<McpServerRow | null> {
  const { rows } = await db.query<McpServerRow>(
    `SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers WHERE team_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [teamId, id],
  );
  return rows[0] ?? null;
}

/** Whether another server of the team has this slug. */
export async function mcpServerSlugTaken(db: Queryable, teamId: string, slug: string, exceptId: string | null = null): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM catalog.mcp_servers WHERE team_id = $1 AND slug = $2 AND ($3::uuid IS NULL OR id <> $3::uuid)',
    [teamId, slug, exceptId],
  );
  return rows.length > 0;
}

/** A team's servers in slug order, after `afterSlug` when given; one row more than `limit` tells a next page exists. */
export async function listTeamMcpServers(db: Queryable, teamId: string, afterSlug: string | null, limit: number): Promise<McpServerRow[]> {
  const { rows } = await db.query<McpServerRow>(
    `SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers
      WHERE team_id = $1 AND ($2::text IS NULL OR slug > $2::text) ORDER BY slug LIMIT $3`,
    [teamId, afterSlug, limit + 1],
  );
  return rows;
}
