import type { Client } from 'pg';

/** Whether `text` occurs anywhere in the identity tables that could leak a key: keys, the outbox, the audit log. */
export async function keyTablesContain(db: Client, text: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM identity.api_keys k WHERE k::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.outbox o WHERE o::text LIKE '%' || $1 || '%')
          + (SELECT count(*) FROM identity.audit_entries a WHERE a::text LIKE '%' || $1 || '%') AS hits`,
    [text],
  );
  return Number(rows[0].hits) > 0;
}

/**
 * The audit entries of one action that mention one id (as target, parent or anywhere else), oldest first, in the
 * shape their writer gave them (`{ type, data }` with data as AuditEventData; a stored parent also says `exists`).
 */
export async function auditEventsOf(db: Client, action: string, targetId: string): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const { rows } = await db.query(
    `SELECT a.* FROM identity.audit_entries a WHERE a.action = $1 AND a::text LIKE '%' || $2 || '%' ORDER BY a.id`,
    [action, targetId],
  );
  return rows.map((row) => ({
    type: row.action,
    data: {
      teamId: row.team_id,
      action: row.action,
      actor: row.actor,
      target: { type: row.target_type, id: row.target_id, label: row.target_label },
      ...(row.parent ? { parent: row.parent } : {}),
      before: row.before ?? undefined,
      after: row.after ?? undefined,
      metadata: row.metadata,
      requestId: row.request_id,
      ...(row.via ? { via: row.via } : {}),
      clientIp: row.client_ip,
    },
  }));
}
