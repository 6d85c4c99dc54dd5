import type { Queryable } from '@platform/runtime';
import type { Approver } from './capabilities-store';
import type { McpServerRow } from './mcp-servers-mappers';
import { MCP_SERVER_VIEW } from './mcp-servers-store';

export type PublishState = 'draft' | 'pending' | 'published' | 'rejected';

/** A server of any team by id (the platform admins' routes name no team). */
export async function findMcpServerById(db: Queryable, id: string, forUpdate = false): Promise<McpServerRow | null> {
  const { rows } = await db.query<McpServerRow>(`SELECT ${MCP_SERVER_VIEW} FROM catalog.mcp_servers WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

/** The server's publish state as committed now (null when it is gone). */
export async function publishStateOf(db: Queryable, id: string): Promise<PublishState | null> {
  const { rows } = await db.query<{ publish_state: PublishState }>('SELECT publish_state FROM catalog.mcp_servers WHERE id = $1', [id]);
  return rows[0]?.publish_state ?? null;
}

/**
 * A publication request: the new state (pending, or published under self_publish), its time and note. The previous
 * review belonged to an earlier request and is cleared (the audit log keeps it).
 */
export async function recordPublishRequest(db: Queryable, id: string, state: PublishState, note: string | null): Promise<McpServerRow> {
  const { rows } = await db.query<McpServerRow>(
    `UPDATE catalog.mcp_servers
        SET publish_state = $2, publish_requested_at = now(), publish_request_note = $3, publish_reviewed_at = NULL,
            publish_reviewed_by = NULL, publish_reviewed_by_name = NULL, publish_review_note = NULL,
            revision = revision + 1, updated_at = now()
      WHERE id = $1
      RETURNING ${MCP_SERVER_VIEW}`,
    [id, state, note],
  );
  return rows[0]!;
}

/** A platform admin's review: the resulting state, when, by whom (id and name as they are now) and the note. */
export async function recordReview(db: Queryable, id: string, state: PublishState, reviewer: Approver, note: string | null): Promise<McpServerRow> {
  const { rows } = await db.query<McpServerRow>(
    `UPDATE catalog.mcp_servers
        SET publish_state = $2, publish_reviewed_at = now(), publish_reviewed_by = $3, publish_reviewed_by_name = $4,
            publish_review_note = $5, revision = revision + 1, updated_at = now()
      WHERE id = $1
      RETURNING ${MCP_SERVER_VIEW}`,
    [id, state, reviewer.id, reviewer.name, note],
  );
  return rows[0]!;
}
