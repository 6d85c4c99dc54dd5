import type { ApiKey } from '@platform/proto/gen/platform/identity/v1/identity';
import { ApiKeyKind } from '@platform/proto/gen/platform/identity/v1/identity';
import { decodeCursor, encodeCursor, isCursorTimestamp, type Queryable } from '@platform/runtime';
import { iso } from './mappers';

/** An API key as read back: never its digest (the digest is written once and only read by authentication). */
export interface ApiKeyRow {
  id: string;
  team_id: string;
  kind: 'personal' | 'service';
  person_id: string | null;
  person_name: string | null;
  service_account_id: string | null;
  name: string;
  scopes: string[];
  knowledge_base_ids: string[];
  agent_ids: string[];
  hint: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_by_name: string | null;
  created_at: Date;
  /** Derived from the database clock, like authentication: active | revoked | expired. */
  status: 'active' | 'revoked' | 'expired';
  /** The exact creation instant as text (microseconds), the position a page cursor resumes from. */
  position: string;
}

const SELECT_KEYS = `
  SELECT k.id, k.team_id, k.kind, k.person_id, p.display_name AS person_name, k.service_account_id, k.name, k.scopes,
         k.knowledge_base_ids::text[] AS knowledge_base_ids, k.agent_ids::text[] AS agent_ids, k.hint,
         k.expires_at, k.revoked_at, k.last_used_at, c.display_name AS created_by_name, k.created_at,
         CASE WHEN k.revoked_at IS NOT NULL THEN 'revoked'
              WHEN k.expires_at IS NOT NULL AND k.expires_at <= now() THEN 'expired'
              ELSE 'active' END AS status,
         k.created_at::text AS position
    FROM identity.api_keys k
    LEFT JOIN identity.people p ON p.id = k.person_id
    LEFT JOIN identity.people c ON c.id = k.created_by`;

const ACTIVE = '(k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))';

export interface NewApiKeyRow {
  id: string;
  teamId: string;
  kind: 'personal' | 'service';
  personId: string | null;
  serviceAccountId: string | null;
  name: string;
  scopes: string[];
  knowledgeBaseIds: string[];
  agentIds: string[];
  secretDigest: string;
  hint: string;
  expiresAt: string | null;
  createdBy: string | null;
}

export async function insertApiKey(db: Queryable, key: NewApiKeyRow): Promise<void> {
  await db.query(
    `INSERT INTO identity.api_keys
       (id, team_id, kind, person_id, service_account_id, name, scopes, knowledge_base_ids, agent_ids,
        secret_digest, hint, expires_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9::uuid[], $10, $11, $12, $13)`,
    [
      key.id, key.teamId, key.kind, key.personId, key.serviceAccountId, key.name, key.scopes, key.knowledgeBaseIds,
      key.agentIds, key.secretDigest, key.hint, key.expiresAt, key.createdBy,
    ],
  );
}

export async function findApiKey(db: Queryable, teamId: string, id: string): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<ApiKeyRow>(`${SELECT_KEYS} WHERE k.team_id = $1 AND k.id = $2`, [teamId, id]);
  return rows[0] ?? null;
}

/** Sets revoked_at once; a key already revoked keeps its first revocation time. True when this call revoked it. */
export async function markApiKeyRevoked(db: Queryable, teamId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE identity.api_keys SET revoked_at = now() WHERE team_id = $1 AND id = $2 AND revoked_at IS NULL',
    [teamId, id],
  );
  return rowCount > 0;
}

export interface ApiKeyFilter {
  teamId: string;
  /** Only this person's personal keys. */
  personId?: string;
  /** Only this service account's keys. */
  serviceAccountId?: string;
  includeInactive: boolean;
}

/** Newest first, keyset-paged on (created_at, id). */
export async function listApiKeys(db: Queryable, filter: ApiKeyFilter, page: PagePosition): Promise<ApiKeyRow[]> {
  const where = ['k.team_id = $1'];
  const params: unknown[] = [filter.teamId];
  if (filter.personId) {
    params.push(filter.personId);
    where.push(`k.kind = 'personal' AND k.person_id = $${params.length}`);
  }
  if (filter.serviceAccountId) {
    params.push(filter.serviceAccountId);
    where.push(`k.service_account_id = $${params.length}`);
  }
  if (!filter.includeInactive) where.push(ACTIVE);
  if (page.after) {
    params.push(page.after.position, page.after.id);
    where.push(`(k.created_at, k.id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  params.push(page.limit + 1);
  const { rows } = await db.query<ApiKeyRow>(
    `${SELECT_KEYS} WHERE ${where.join(' AND ')} ORDER BY k.created_at DESC, k.id DESC LIMIT $${params.length}`,
    params,
  );
  return rows;
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    kind: row.kind === 'personal' ? ApiKeyKind.API_KEY_KIND_PERSONAL : ApiKeyKind.API_KEY_KIND_SERVICE,
    scopes: row.scopes,
    knowledgeBaseIds: row.knowledge_base_ids,
    agentIds: row.agent_ids,
    hint: row.hint,
    personId: row.person_id ?? '',
    personName: row.person_name ?? '',
    serviceAccountId: row.service_account_id ?? '',
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
    createdByName: row.created_by_name ?? '',
    createdAt: iso(row.created_at),
    status: row.status,
  };
}

// ---- Paging (shared with the service-accounts store) ------------------------------------------------------

/** Where a keyset page starts: after the row with this creation instant and id. */
export interface PagePosition {
  limit: number;
  after?: { position: string; id: string };
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

/**
 * Reads a PageRequest; a cursor this store did not make is a 400 naming `cursor`. The position is cast to a
 * timestamptz, so it must be an instant PostgreSQL reads (isCursorTimestamp), not merely shaped like one.
 */
export function pagePosition(page: { pageSize: number; cursor: string } | undefined): PagePosition {
  const limit = Math.min(Math.max(page?.pageSize || DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
  if (!page?.cursor) return { limit };
  const after = decodeCursor(page.cursor, (value) =>
    Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string' && isCursorTimestamp(value[0])
      ? { position: value[0], id: value[1] }
      : null,
  );
  return { limit, after };
}

/** Trims the look-ahead row and makes the cursor of the next page (empty on the last page). */
export function pageOf<R extends { position: string; id: string }>(rows: R[], page: PagePosition): { rows: R[]; nextCursor: string } {
  if (rows.length <= page.limit) return { rows, nextCursor: '' };
  const kept = rows.slice(0, page.limit);
  const last = kept[kept.length - 1]!;
  return { rows: kept, nextCursor: encodeCursor([last.position, last.id]) };
}
