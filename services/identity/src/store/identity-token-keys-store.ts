import type { Queryable } from '@platform/runtime';

/** A key as stored; `due` says whether it is older than the rotation age asked about. */
export interface IdentityTokenKeyRow {
  kid: string;
  alg: string;
  private_jwk_sealed: string;
  public_jwk: Record<string, unknown>;
  created_at: Date;
  retires_at: Date | null;
  due: boolean;
}

/** The keys still published (current first, then newer before older), each marked due past `rotationDays`. */
export async function listPublishedKeys(db: Queryable, rotationDays: number): Promise<IdentityTokenKeyRow[]> {
  const { rows } = await db.query<IdentityTokenKeyRow>(
    `SELECT kid, alg, private_jwk_sealed, public_jwk, created_at, retires_at,
            created_at <= now() - ($1::double precision * interval '1 day') AS due
       FROM identity.identity_token_keys
      WHERE retires_at IS NULL OR retires_at > now()
      ORDER BY retires_at IS NOT NULL, created_at DESC`,
    [rotationDays],
  );
  return rows;
}

/** Serialises key creation across replicas until the transaction ends. */
export async function lockKeyRotation(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('identity.identity_token_keys', 0))`);
}

/** Retires the current key: its public key stays published for `publishedForSeconds` more. */
export async function retireCurrentKey(db: Queryable, publishedForSeconds: number): Promise<void> {
  await db.query(
    `UPDATE identity.identity_token_keys SET retires_at = now() + make_interval(secs => $1) WHERE retires_at IS NULL`,
    [publishedForSeconds],
  );
}

export async function insertKey(db: Queryable, key: { kid: string; alg: string; privateJwkSealed: string; publicJwk: Record<string, unknown> }): Promise<void> {
  await db.query(
    `INSERT INTO identity.identity_token_keys (kid, alg, private_jwk_sealed, public_jwk) VALUES ($1, $2, $3, $4::jsonb)`,
    [key.kid, key.alg, key.privateJwkSealed, JSON.stringify(key.publicJwk)],
  );
}
