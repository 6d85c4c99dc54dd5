import type { Queryable } from '@platform/runtime';

/**
 * A key as stored. `active`: it may sign (its activation time has come); `due`: it has signed for longer than the
 * rotation age asked about. The newest key has no `retires_at`; it may still be waiting for its activation.
 */
export interface IdentityTokenKeyRow {
  kid: string;
  alg: string;
  private_jwk_sealed: string;
  public_jwk: Record<string, unknown>;
  created_at: Date;
  activates_at: Date;
  retires_at: Date | null;
  active: boolean;
  due: boolean;
}

/**
 * The keys still published, latest activation first (so a key waiting for its activation, if any, then the
 * signing key, then retired ones), each marked active, and due past `rotationDays` of signing.
 */
export async function listPublishedKeys(db: Queryable, rotationDays: number): Promise<IdentityTokenKeyRow[]> {
  const { rows } = await db.query<IdentityTokenKeyRow>(
    `SELECT kid, alg, private_jwk_sealed, public_jwk, created_at, activates_at, retires_at,
            activates_at <= now() AS active,
            activates_at <= now() - ($1::double precision * interval '1 day') AS due
       FROM identity.identity_token_keys
      WHERE retires_at IS NULL OR retires_at > now()
      ORDER BY activates_at DESC, created_at DESC`,
    [rotationDays],
  );
  return rows;
}

/**
 * Destroys the keys no longer published: nothing verifies with them any more and nothing signs with them, so their
 * sealed private halves are kept for no one.
 */
export async function deleteRetiredKeys(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM identity.identity_token_keys WHERE retires_at <= now()`);
}

/** Serialises key creation across replicas until the transaction ends. */
export async function lockKeyRotation(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('identity.identity_token_keys', 0))`);
}

/**
 * Retires the newest key: its public key stays published until `publishedForSeconds` from now (the caller counts
 * them from its successor's activation, not from now).
 */
export async function retireNewestKey(db: Queryable, publishedForSeconds: number): Promise<void> {
  await db.query(
    `UPDATE identity.identity_token_keys SET retires_at = now() + make_interval(secs => $1) WHERE retires_at IS NULL`,
    [publishedForSeconds],
  );
}

/** Stores a new newest key, published from now and signing from `activatesInSeconds` from now. */
export async function insertKey(
  db: Queryable,
  key: { kid: string; alg: string; privateJwkSealed: string; publicJwk: Record<string, unknown>; activatesInSeconds: number },
): Promise<void> {
  await db.query(
    `INSERT INTO identity.identity_token_keys (kid, alg, private_jwk_sealed, public_jwk, activates_at)
     VALUES ($1, $2, $3, $4::jsonb, now() + make_interval(secs => $5))`,
    [key.kid, key.alg, key.privateJwkSealed, JSON.stringify(key.publicJwk), key.activatesInSeconds],
  );
}
