import type { Person, Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { PlatformRole, TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';

/** Rows as the adapters return them: bigint as string, timestamps as Date. */
export interface PersonRow {
  id: string;
  email: string;
  display_name: string;
  password_hash: string | null;
  status: 'active' | 'suspended';
  platform_role: 'admin' | 'auditor' | 'staff' | null;
  last_sign_in_at: Date | null;
  revision: string;
  created_at: Date;
  updated_at: Date;
}

export interface TeamRow {
  id: string;
  slug: string;
  name: string;
  kind: 'team' | 'personal' | 'platform';
  personal_owner_id: string | null;
  archived_at: Date | null;
  revision: string;
  created_at: Date;
  updated_at: Date;
  /** Null: the platform default publish policy applies. */
  publishing_override: string | null;
  member_count?: string;
}

export type RoleName = 'owner' | 'admin' | 'editor' | 'member';

export const iso = (value: Date | null | undefined): string | undefined => (value ? value.toISOString() : undefined);

export function platformRoleOf(name: PersonRow['platform_role']): PlatformRole {
  return name ? (`PLATFORM_ROLE_${name.toUpperCase()}` as PlatformRole) : PlatformRole.PLATFORM_ROLE_UNSPECIFIED;
}

export function platformRoleName(role: PlatformRole | undefined): PersonRow['platform_role'] {
  const name = role?.replace(/^PLATFORM_ROLE_/, '').toLowerCase();
  return name === 'admin' || name === 'auditor' || name === 'staff' ? name : null;
}

export function teamRoleOf(name: RoleName | null | undefined): TeamRole {
  return name ? (`TEAM_ROLE_${name.toUpperCase()}` as TeamRole) : TeamRole.TEAM_ROLE_UNSPECIFIED;
}

export function teamRoleName(role: TeamRole | undefined): RoleName | null {
  const name = role?.replace(/^TEAM_ROLE_/, '').toLowerCase();
  return name === 'owner' || name === 'admin' || name === 'editor' || name === 'member' ? name : null;
}

export function toPerson(row: PersonRow): Person {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    status: row.status,
    platformRole: platformRoleOf(row.platform_role),
    lastSignInAt: iso(row.last_sign_in_at),
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toTeam(row: TeamRow): Team {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    kind: row.kind,
    archived: row.archived_at !== null,
    archivedAt: iso(row.archived_at),
    memberCount: row.member_count ?? '0',
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    personalOwnerId: row.personal_owner_id ?? '',
    publishingOverride: row.publishing_override ?? '',
  };
}
