import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';

/** A gateway as the edge would name it (ids and slugs are the catalog's; the identity service takes them as given). */
export function gateway(appUrl: string): { id: string; slug: string; resource: string } {
  const slug = `gw-${randomUUID().slice(0, 8)}`;
  return { id: randomUUID(), slug, resource: `${appUrl}/mcp/${slug}` };
}

export interface StoredAuditEntry {
  action: string;
  team_id: string;
  actor: Record<string, unknown>;
  target_type: string;
  target_id: string;
  metadata: Record<string, unknown>;
  client_ip: string;
  request_id: string;
  before: unknown;
  after: unknown;
}

/** Audit entries stored for a target (through the outbox, the bus and the audit consumer). */
export function auditEntries(db: Client, action: string, targetId: string): Promise<StoredAuditEntry[]> {
  return db
    .query<StoredAuditEntry>(
      `SELECT action, team_id, actor, target_type, target_id, metadata, client_ip, request_id, before, after
         FROM identity.audit_entries WHERE action = $1 AND target_id = $2 ORDER BY id`,
      [action, targetId],
    )
    .then((result) => result.rows);
}

export const PLATFORM_TEAM_ID = '00000000-0000-4000-8000-000000000001';
