import type { Queryable } from '@platform/runtime';

/** Browser sessions: only the HMAC digest of the cookie value is stored, never the value itself. */
export async function insertSession(
  db: Queryable,
  session: { id: string; tokenDigest: string; personId: string; clientIp: string; userAgent: string; ttlSeconds: number },
): Promise<Date> {
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO identity.sessions (id, token_digest, person_id, client_ip, user_agent, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
     RETURNING expires_at`,
    [session.id, session.tokenDigest, session.personId, session.clientIp || null, session.userAgent || null, session.ttlSeconds],
  );
  return rows[0]!.expires_at;
}

/** Ends the live session with this token digest; false when there was none (already ended, expired or unknown). */
export async function endSessionByDigest(db: Queryable, tokenDigest: string): Promise<boolean> {
  const { rows } = await db.query(
    'UPDATE identity.sessions SET ended_at = now() WHERE token_digest = $1 AND ended_at IS NULL RETURNING id',
    [tokenDigest],
  );
  return rows.length > 0;
}

/** Ends every live session of a person (suspension, password reset); returns how many were live. */
export async function endSessionsOfPerson(db: Queryable, personId: string): Promise<number> {
  const { rows } = await db.query(
    'UPDATE identity.sessions SET ended_at = now() WHERE person_id = $1 AND ended_at IS NULL AND expires_at > now() RETURNING id',
    [personId],
  );
  // Expired sessions are closed too, without being counted, so nothing of the person stays open.
  await db.query('UPDATE identity.sessions SET ended_at = now() WHERE person_id = $1 AND ended_at IS NULL', [personId]);
  return rows.length;
}

/**
 * Deletes up to `limit` sessions that expired or were ended more than `retentionDays` days ago (through `sessions_over_at`).
 * Rows another replica is deleting at the same time are skipped, not waited for. Returns how many were deleted.
 */
export async function deleteSessionsPastRetention(db: Queryable, retentionDays: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM identity.sessions
      WHERE id IN (SELECT id FROM identity.sessions
                    WHERE LEAST(expires_at, ended_at) < now() - make_interval(days => $1::int)
                    LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays, limit],
  );
  return rowCount;
}

export async function recordSignIn(db: Queryable, personId: string): Promise<void> {
  await db.query('UPDATE identity.people SET last_sign_in_at = now() WHERE id = $1', [personId]);
}
