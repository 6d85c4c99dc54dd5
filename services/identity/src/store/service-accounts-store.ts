import type { ServiceAccount } from '@platform/proto/gen/platform/identity/v1/identity';
import type { Queryable } from '@platform/runtime';
import type { PagePosition } from './api-keys-store';
import { iso, teamRoleOf } from './mappers';

export interface ServiceAccountRow {
  id: string;
  team_id: string;
  team_slug: string;
  name: string;
  description: string;
  role: 'member' | 'editor';
  enabled: boolean;
  active_key_count: string;
  last_used_at: Date | null;
  created_by_name: string | null;
  revision: string;
  created_at: Date;
  updated_at: Date;
  /** The exact creation instant as text, the position a page cursor resumes from. */
  position: string;
}

const SELECT_ACCOUNTS = `
  SELECT sa.id, sa.team_id, t.slug AS team_slug, sa.name, sa.description, sa.role, sa.enabled,
         (SELECT count(*) FROM identity.api_keys k
           WHERE k.service_account_id = sa.id AND k.revoked_at IS NULL
             AND (k.expires_at IS NULL OR k.expires_at > now())) AS active_key_count,
         sa.last_used_at, c.display_name AS created_by_name, sa.revision, sa.created_at, sa.updated_at,
         sa.created_at::text AS position
    FROM identity.service_accounts sa
    JOIN identity.teams t ON t.id = sa.team_id
    LEFT JOIN identity.people c ON c.id = sa.created_by`;

export async function insertServiceAccount(
  db: Queryable,
  account: { id: string; teamId: string; name: string; description: string; role: 'member' | 'editor'; enabled: boolean; createdBy: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO identity.service_accounts (id, team_id, name, description, role, enabled, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [account.id, account.teamId, account.name, account.description, account.role, account.enabled, account.createdBy],
  );
}

export async function findServiceAccount(db: Queryable, teamId: string, id: string): Promise<ServiceAccountRow | null> {
  const { rows } = await db.query<ServiceAccountRow>(`${SELECT_ACCOUNTS} WHERE sa.team_id = $1 AND sa.id = $2`, [teamId, id]);
  return rows[0] ?? null;
}

/** Whether another account of the team already has this name (names are unique per team). */
export async function serviceAccountNameTaken(db: Queryable, teamId: string, name: string, exceptId: string | null): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM identity.service_accounts WHERE team_id = $1 AND name = $2 AND ($3::uuid IS NULL OR id <> $3::uuid)',
    [teamId, name, exceptId],
  );
  return rows.length > 0;
}

/** Newest first, keyset-paged on (created_at, id). */
export async function listServiceAccounts(db: Queryable, teamId: string, page: PagePosition): Promise<ServiceAccountRow[]> {
  const params: unknown[] = [teamId];
  let after = '';
  if (page.after) {
    params.push(page.after.position, page.after.id);
    after = 'AND (sa.created_at, sa.id) < ($2::timestamptz, $3::uuid)';
  }
  params.push(page.limit + 1);
  const { rows } = await db.query<ServiceAccountRow>(
    `${SELECT_ACCOUNTS} WHERE sa.team_id = $1 ${after} ORDER BY sa.created_at DESC, sa.id DESC LIMIT $${params.length}`,
    params,
  );
  return rows;
}

export interface ServiceAccountChanges {
  name?: string;
  description?: string;
  role?: 'member' | 'editor';
  enabled?: boolean;
}

/**
 * The part of `changes` that would alter `row`: a field given the value it already has is no change. An update
 * left with nothing to change must not be written (it would move the revision and audit a change that is none).
 */
export function serviceAccountChangesTo(row: ServiceAccountRow, changes: ServiceAccountChanges): ServiceAccountChanges {
  const differing: ServiceAccountChanges = {};
  if (changes.name !== undefined && changes.name !== row.name) differing.name = changes.name;
  if (changes.description !== undefined && changes.description !== row.description) differing.description = changes.description;
  if (changes.role !== undefined && changes.role !== row.role) differing.role = changes.role;
  if (changes.enabled !== undefined && changes.enabled !== row.enabled) differing.enabled = changes.enabled;
  return differing;
}

/** Applies the changes if the revision still matches; false when no row matched (gone, or changed since). */
export async function updateServiceAccountRow(
  db: Queryable,
  teamId: string,
  id: string,
  expectedRevision: string,
  changes: ServiceAccountChanges,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE identity.service_accounts
        SET name = COALESCE($4, name), description = COALESCE($5, description), role = COALESCE($6, role),
            enabled = COALESCE($7, enabled), revision = revision + 1, updated_at = now()
      WHERE team_id = $1 AND id = $2 AND revision = $3`,
    [teamId, id, expectedRevision, changes.name ?? null, changes.description ?? null, changes.role ?? null, changes.enabled ?? null],
  );
  return rowCount > 0;
}

/** Deletes the account; its keys go with it (ON DELETE CASCADE). False when it did not exist. */
export async function deleteServiceAccountRow(db: Queryable, teamId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM identity.service_accounts WHERE team_id = $1 AND id = $2', [teamId, id]);
  return rowCount > 0;
}

export function toServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return {
    id: row.id,
    teamId: row.team_id,
    teamSlug: row.team_slug,
    name: row.name,
    description: row.description,
    role: teamRoleOf(row.role),
    enabled: row.enabled,
    activeKeyCount: Number(row.active_key_count),
    lastUsedAt: iso(row.last_used_at),
    createdByName: row.created_by_name ?? '',
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** A Postgres unique violation: here, a concurrent create or rename that took the same name. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
