import type { Queryable } from '@platform/runtime';
import { auditEntriesInsertSql, auditEntriesParameter, type NewAuditEntry } from './audit-store';

/** Authorization codes, connections and tokens (identity.oauth_codes / oauth_connections / oauth_tokens). */

export interface NewCode {
  digest: string;
  clientId: string;
  clientName: string;
  clientVerified: boolean;
  redirectUri: string;
  redirectUriSent: boolean;
  codeChallenge: string;
  resource: string;
  gatewayId: string;
  gatewaySlug: string;
  personId: string;
  ttlSeconds: number;
}

export async function insertCode(db: Queryable, code: NewCode): Promise<void> {
  await db.query(
    `INSERT INTO identity.oauth_codes
       (digest, client_id, client_name, client_verified, redirect_uri, code_challenge, resource, gateway_id, gateway_slug, person_id, expires_at,
        redirect_uri_sent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11), $12)`,
    [
      code.digest, code.clientId, code.clientName, code.clientVerified, code.redirectUri, code.codeChallenge, code.resource,
      code.gatewayId, code.gatewaySlug, code.personId, code.ttlSeconds, code.redirectUriSent,
    ],
  );
}

export interface ClaimedCodeRow {
  client_id: string;
  client_name: string;
  client_verified: boolean;
  redirect_uri: string;
  redirect_uri_sent: boolean;
  code_challenge: string;
  resource: string;
  gateway_id: string;
  gateway_slug: string;
  person_id: string;
  person_status: 'active' | 'suspended';
  email: string;
  display_name: string;
}

/**
 * Claims a code atomically (first use, not expired), recording the connection its exchange creates. Null when
 * the code is unknown, expired or already used: two concurrent exchanges cannot both claim it.
 */
export async function claimCode(db: Queryable, digest: string, connectionId: string): Promise<ClaimedCodeRow | null> {
  const { rows } = await db.query<ClaimedCodeRow>(
    `WITH claimed AS (
       UPDATE identity.oauth_codes SET used_at = now(), connection_id = $2
        WHERE digest = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING client_id, client_name, client_verified, redirect_uri, redirect_uri_sent, code_challenge, resource, gateway_id, gateway_slug, person_id)
     SELECT claimed.*, p.status AS person_status, p.email, p.display_name
       FROM claimed JOIN identity.people p ON p.id = claimed.person_id`,
    [digest, connectionId],
  );
  return rows[0] ?? null;
}

/** What a code that could not be claimed was: used (and what it issued), or unknown/expired (null). */
export async function findUsedCode(db: Queryable, digest: string): Promise<{ connection_id: string | null } | null> {
  const { rows } = await db.query<{ connection_id: string | null }>(
    'SELECT connection_id FROM identity.oauth_codes WHERE digest = $1 AND used_at IS NOT NULL',
    [digest],
  );
  return rows[0] ?? null;
}

export interface ConnectionRow {
  id: string;
  person_id: string;
  client_id: string;
  client_name: string;
  client_verified: boolean;
  gateway_id: string;
  gateway_slug: string;
  resource: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const CONNECTION_COLUMNS =
  'id, person_id, client_id, client_name, client_verified, gateway_id, gateway_slug, resource, created_at, last_used_at, revoked_at';

export interface NewTokenPair {
  accessDigest: string;
  refreshDigest: string;
  generation: number;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

export interface NewConnection {
  id: string;
  personId: string;
  clientId: string;
  clientName: string;
  clientVerified: boolean;
  gatewayId: string;
  gatewaySlug: string;
  resource: string;
}

/** Creates a connection with its first access + refresh pair (generation 1), in one statement. */
export async function insertConnectionWithTokens(db: Queryable, connection: NewConnection, pair: NewTokenPair): Promise<void> {
  await db.query(
    `WITH connection AS (
       INSERT INTO identity.oauth_connections
         (id, person_id, client_id, client_name, client_verified, gateway_id, gateway_slug, resource, refresh_generation, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
       RETURNING id)
     INSERT INTO identity.oauth_tokens (digest, connection_id, kind, generation, expires_at)
     SELECT v.digest, connection.id, v.kind, $9, now() + make_interval(secs => v.ttl)
       FROM connection, (VALUES ($10, 'access', $12::integer), ($11, 'refresh', $13::integer)) AS v (digest, kind, ttl)`,
    [
      connection.id, connection.personId, connection.clientId, connection.clientName, connection.clientVerified,
      connection.gatewayId, connection.gatewaySlug, connection.resource, pair.generation,
      pair.accessDigest, pair.refreshDigest, pair.accessTtlSeconds, pair.refreshTtlSeconds,
    ],
  );
}

/** A connection joined with its person, as the refresh grant checks it. */
export interface RefreshContextRow {
  generation: number;
  connection_id: string;
  person_id: string;
  client_id: string;
  client_name: string;
  client_verified: boolean;
  gateway_id: string;
  gateway_slug: string;
  resource: string;
  connection_revoked: boolean;
  refresh_generation: number;
  person_status: 'active' | 'suspended';
  email: string;
  display_name: string;
}

const REFRESH_CONTEXT = `
  c.id AS connection_id, c.person_id, c.client_id, c.client_name, c.client_verified, c.gateway_id, c.gateway_slug,
  c.resource, c.revoked_at IS NOT NULL AS connection_revoked, c.refresh_generation,
  p.status AS person_status, p.email, p.display_name`;

/**
 * Claims a refresh token atomically: only a live, unrotated, unrevoked one, exactly once (`rotated_at` set
 * here). Null when it cannot be claimed; the caller then finds out why.
 */
export async function claimRefreshToken(db: Queryable, digest: string): Promise<RefreshContextRow | null> {
  const { rows } = await db.query<RefreshContextRow>(
    `WITH claimed AS (
       UPDATE identity.oauth_tokens SET rotated_at = now()
        WHERE digest = $1 AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now()
        RETURNING connection_id, generation)
     SELECT claimed.generation, ${REFRESH_CONTEXT}
       FROM claimed
       JOIN identity.oauth_connections c ON c.id = claimed.connection_id
       JOIN identity.people p ON p.id = c.person_id`,
    [digest],
  );
  return rows[0] ?? null;
}

/** A refresh token with its context, whatever its state; `claimable` when it is live and unrotated. */
export interface PresentedRefreshRow extends RefreshContextRow {
  claimable: boolean;
}

/** Reads a presented refresh token and its context without locking anything (the fast path's first step). */
export async function findRefreshToken(db: Queryable, digest: string): Promise<PresentedRefreshRow | null> {
  const { rows } = await db.query<PresentedRefreshRow>(
    `SELECT t.generation, ${REFRESH_CONTEXT},
            (t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > now()) AS claimable
       FROM identity.oauth_tokens t
       JOIN identity.oauth_connections c ON c.id = t.connection_id
       JOIN identity.people p ON p.id = c.person_id
      WHERE t.digest = $1 AND t.kind = 'refresh'`,
    [digest],
    { prepared: 'identity_oauth_find_refresh_token' },
  );
  return rows[0] ?? null;
}

/** One refresh token to rotate: the token as presented, the context it was issued in, its successor and audit entry. */
export interface Rotation {
  digest: string;
  expected: RefreshContextRow & { generation: number };
  pair: NewTokenPair;
  audit: NewAuditEntry;
}

const ROTATION_RECORD = `digest text, generation integer, connection_id uuid, client_id text, resource text, client_name text,
  gateway_id uuid, gateway_slug text, person_id uuid, email text, display_name text, next_generation integer,
  access_digest text, refresh_digest text, access_ttl integer, refresh_ttl integer`;

/**
 * Rotations of different connections in ONE statement (atomic on its own, no transaction round trips; the
 * caller never puts two of one connection in a batch). Each is claimed exactly once, only while everything
 * `expected` says still holds (same generation, live connection of this client and resource, active person with
 * the name and email the audit entry carries); for each claimed, the connection's older unrotated refresh tokens
 * are retired, its newest generation moves on, the new pair is inserted and its `oauth.token_issue` audit entry
 * stored (not a removal, so no earlier entry is marked gone). Returns, per rotation in order, whether it was
 * claimed; one that was not (a concurrent use won, or something changed) wrote nothing.
 */
export async function claimAndRotate(db: Queryable, rotations: readonly Rotation[]): Promise<boolean[]> {
  const { rows } = await db.query<{ position: string }>(
    `WITH presented AS (
       SELECT * FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (${ROTATION_RECORD})) WITH ORDINALITY AS i),
     claimed AS (
       UPDATE identity.oauth_tokens t SET rotated_at = now()
         FROM presented i, identity.oauth_connections c, identity.people p
        WHERE t.digest = i.digest AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > now()
          AND t.generation = i.generation AND t.connection_id = i.connection_id
          AND c.id = t.connection_id AND c.revoked_at IS NULL AND c.client_id = i.client_id AND c.resource = i.resource
          AND c.client_name = i.client_name AND c.gateway_id = i.gateway_id AND c.gateway_slug = i.gateway_slug
          AND p.id = c.person_id AND p.id = i.person_id AND p.status = 'active' AND p.email = i.email AND p.display_name = i.display_name
        RETURNING i.ordinality AS position, i.digest, t.connection_id, i.next_generation, i.access_digest, i.refresh_digest, i.access_ttl, i.refresh_ttl),
     retired AS (
       UPDATE identity.oauth_tokens t SET rotated_at = now()
         FROM claimed k
        WHERE t.connection_id = k.connection_id AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
          AND t.generation < k.next_generation AND t.digest <> k.digest),
     moved AS (
       UPDATE identity.oauth_connections c
          SET refresh_generation = GREATEST(c.refresh_generation, k.next_generation), last_used_at = now()
         FROM claimed k
        WHERE c.id = k.connection_id),
     issued AS (
       INSERT INTO identity.oauth_tokens (digest, connection_id, kind, generation, expires_at)
       SELECT v.digest, k.connection_id, v.kind, k.next_generation, now() + make_interval(secs => v.ttl)
         FROM claimed k,
              LATERAL (VALUES (k.access_digest, 'access', k.access_ttl), (k.refresh_digest, 'refresh', k.refresh_ttl)) AS v (digest, kind, ttl)),
     audited AS (${auditEntriesInsertSql(2, { from: 'claimed', on: 'claimed.position = r.ordinality' })})
     SELECT position FROM claimed`,
    [
      JSON.stringify(
        rotations.map(({ digest, expected, pair }) => ({
          digest,
          generation: expected.generation,
          connection_id: expected.connection_id,
          client_id: expected.client_id,
          resource: expected.resource,
          client_name: expected.client_name,
          gateway_id: expected.gateway_id,
          gateway_slug: expected.gateway_slug,
          person_id: expected.person_id,
          email: expected.email,
          display_name: expected.display_name,
          next_generation: pair.generation,
          access_digest: pair.accessDigest,
          refresh_digest: pair.refreshDigest,
          access_ttl: pair.accessTtlSeconds,
          refresh_ttl: pair.refreshTtlSeconds,
        })),
      ),
      auditEntriesParameter(rotations.map((rotation) => rotation.audit)),
    ],
    // Planning this statement costs about as much as running it; prepared once per connection, it is not planned again.
    { prepared: 'identity_oauth_claim_and_rotate' },
  );
  const claimed = new Set(rows.map((row) => Number(row.position)));
  return rotations.map((_, index) => claimed.has(index + 1));
}

export interface RetiredRefreshRow extends RefreshContextRow {
  /** Rotated, not revoked, not expired: a presentation again of a retired token. */
  rotated: boolean;
  /** Rotated no more than the grace period ago. */
  in_grace: boolean;
}

/**
 * A refresh token that could not be claimed, with its connection locked: the connection's newest generation is
 * read after any rotation in flight has committed, so the grace decision is made on the current state.
 */
export async function findRetiredRefreshToken(db: Queryable, digest: string, graceSeconds: number): Promise<RetiredRefreshRow | null> {
  const { rows } = await db.query<RetiredRefreshRow>(
    `SELECT t.generation, ${REFRESH_CONTEXT},
            (t.rotated_at IS NOT NULL AND t.revoked_at IS NULL AND t.expires_at > now()) AS rotated,
            COALESCE(t.rotated_at >= now() - make_interval(secs => $2), false) AS in_grace
       FROM identity.oauth_tokens t
       JOIN identity.oauth_connections c ON c.id = t.connection_id
       JOIN identity.people p ON p.id = c.person_id
      WHERE t.digest = $1 AND t.kind = 'refresh'
        FOR UPDATE OF c`,
    [digest, graceSeconds],
  );
  return rows[0] ?? null;
}

/**
 * Issues a connection's next pair of `generation`: retires every older refresh token still unrotated (so only
 * the newest generation can be claimed) and moves the connection's newest generation on. One statement.
 */
export async function insertRotatedPair(db: Queryable, connectionId: string, pair: NewTokenPair): Promise<void> {
  await db.query(
    `WITH retired AS (
       UPDATE identity.oauth_tokens SET rotated_at = now()
        WHERE connection_id = $1 AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL AND generation < $2),
     moved AS (
       UPDATE identity.oauth_connections
          SET refresh_generation = GREATEST(refresh_generation, $2), last_used_at = now()
        WHERE id = $1)
     INSERT INTO identity.oauth_tokens (digest, connection_id, kind, generation, expires_at)
     VALUES ($3, $1, 'access', $2, now() + make_interval(secs => $5)),
            ($4, $1, 'refresh', $2, now() + make_interval(secs => $6))`,
    [connectionId, pair.generation, pair.accessDigest, pair.refreshDigest, pair.accessTtlSeconds, pair.refreshTtlSeconds],
  );
}

/** Revokes a connection and all its tokens. Returns the connection when this call revoked it (null if it already was). */
export async function revokeConnectionAndTokens(db: Queryable, connectionId: string): Promise<ConnectionRow | null> {
  const { rows } = await db.query<ConnectionRow>(
    `WITH tokens AS (
       UPDATE identity.oauth_tokens SET revoked_at = now() WHERE connection_id = $1 AND revoked_at IS NULL)
     UPDATE identity.oauth_connections SET revoked_at = now()
      WHERE id = $1 AND revoked_at IS NULL
      RETURNING ${CONNECTION_COLUMNS}`,
    [connectionId],
  );
  return rows[0] ?? null;
}

export interface PresentedTokenRow {
  kind: 'access' | 'refresh';
  connection_id: string;
  client_id: string;
  client_name: string;
  person_id: string;
  gateway_id: string;
  gateway_slug: string;
  /** Not expired, not revoked, connection not revoked: revoking it would change something. */
  live: boolean;
}

/** A token presented for revocation, whatever its state; null when unknown. */
export async function findPresentedToken(db: Queryable, digest: string): Promise<PresentedTokenRow | null> {
  const { rows } = await db.query<PresentedTokenRow>(
    `SELECT t.kind, t.connection_id, c.client_id, c.client_name, c.person_id, c.gateway_id, c.gateway_slug,
            (t.revoked_at IS NULL AND t.expires_at > now() AND c.revoked_at IS NULL) AS live
       FROM identity.oauth_tokens t JOIN identity.oauth_connections c ON c.id = t.connection_id
      WHERE t.digest = $1`,
    [digest],
  );
  return rows[0] ?? null;
}

/** Revokes one token; true when this call revoked it. */
export async function revokeOneToken(db: Queryable, digest: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE identity.oauth_tokens SET revoked_at = now() WHERE digest = $1 AND revoked_at IS NULL', [digest]);
  return rowCount > 0;
}

export interface ValidAccessRow {
  connection_id: string;
  person_id: string;
  email: string;
  display_name: string;
  gateway_id: string;
  client_id: string;
  client_name: string;
  client_verified: boolean;
  expires_at: Date;
  touch_due: boolean;
}

/** The /mcp check in one query: live access token, live connection of this gateway, active person. */
export async function findValidAccessToken(db: Queryable, digest: string, gatewaySlug: string, touchEverySeconds: number): Promise<ValidAccessRow | null> {
  const { rows } = await db.query<ValidAccessRow>(
    `SELECT c.id AS connection_id, c.person_id, p.email, p.display_name, c.gateway_id, c.client_id, c.client_name, c.client_verified, t.expires_at,
            (c.last_used_at IS NULL OR c.last_used_at < now() - make_interval(secs => $3)) AS touch_due
       FROM identity.oauth_tokens t
       JOIN identity.oauth_connections c ON c.id = t.connection_id
       JOIN identity.people p ON p.id = c.person_id
      WHERE t.digest = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > now()
        AND c.revoked_at IS NULL AND c.gateway_slug = $2 AND p.status = 'active'`,
    [digest, gatewaySlug, touchEverySeconds],
  );
  return rows[0] ?? null;
}

/** Records use, at most once per `everySeconds` (the condition makes concurrent touches a no-op). */
export async function touchConnection(db: Queryable, connectionId: string, everySeconds: number): Promise<void> {
  await db.query(
    `UPDATE identity.oauth_connections SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
    [connectionId, everySeconds],
  );
}

export interface ListedConnectionRow extends ConnectionRow {
  /** The exact creation instant as text, the position a page cursor resumes from. */
  position: string;
}

/**
 * A person's active connections (not revoked, with a token still alive), newest first, keyset-paged on
 * (created_at, id).
 */
export async function listActiveConnections(
  db: Queryable,
  personId: string,
  page: { limit: number; after?: { position: string; id: string } },
): Promise<ListedConnectionRow[]> {
  const params: unknown[] = [personId];
  let after = '';
  if (page.after) {
    params.push(page.after.position, page.after.id);
    after = 'AND (c.created_at, c.id) < ($2::timestamptz, $3::uuid)';
  }
  params.push(page.limit + 1);
  const { rows } = await db.query<ListedConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS.split(', ').map((column) => `c.${column}`).join(', ')}, c.created_at::text AS position
       FROM identity.oauth_connections c
      WHERE c.person_id = $1 AND c.revoked_at IS NULL ${after}
        AND EXISTS (SELECT 1 FROM identity.oauth_tokens t
                     WHERE t.connection_id = c.id AND t.revoked_at IS NULL AND t.expires_at > now()
                       AND (t.kind = 'access' OR t.rotated_at IS NULL))
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT $${params.length}`,
    params,
  );
  return rows;
}

/** A person's connection that is not revoked; null otherwise. */
export async function findActiveConnectionOf(db: Queryable, personId: string, connectionId: string): Promise<ConnectionRow | null> {
  const { rows } = await db.query<ConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS} FROM identity.oauth_connections WHERE id = $1 AND person_id = $2 AND revoked_at IS NULL`,
    [connectionId, personId],
  );
  return rows[0] ?? null;
}

/**
 * What can no longer matter: codes and tokens a day past expiry (until then a replay is still recognised), unused
 * registrations past theirs. Each is read through its expiry index.
 */
const EXPIRED_GRANTS = [
  { table: 'identity.oauth_codes', key: 'digest', expired: `expires_at < now() - interval '1 day'` },
  { table: 'identity.oauth_tokens', key: 'digest', expired: `expires_at < now() - interval '1 day'` },
  { table: 'identity.oauth_clients', key: 'id', expired: 'expires_at IS NOT NULL AND expires_at < now()' },
] as const;

/**
 * Deletes up to `limit` expired codes, tokens and registrations of each kind, one short statement per kind. Rows
 * another replica is deleting at the same time are skipped, not waited for. Returns how many were deleted.
 */
export async function deleteExpiredGrants(db: Queryable, limit: number): Promise<number> {
  let deleted = 0;
  for (const { table, key, expired } of EXPIRED_GRANTS) {
    const { rowCount } = await db.query(
      `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${expired} LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit],
    );
    deleted += rowCount;
  }
  return deleted;
}
