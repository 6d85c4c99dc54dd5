import { ApiKeyKind, PlatformRole, TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';

/** Team roles as the API spells them, from most to least privileged. */
export const TEAM_ROLES = ['owner', 'admin', 'editor', 'member'] as const;
export type TeamRoleName = (typeof TEAM_ROLES)[number];

export const PLATFORM_ROLES = ['admin', 'auditor', 'staff'] as const;
export type PlatformRoleName = (typeof PLATFORM_ROLES)[number];

// The proto enums are string enums (`TEAM_ROLE_OWNER`); the API spells them `owner`.
export function teamRoleName(role: TeamRole | undefined): TeamRoleName | null {
  const name = role?.replace(/^TEAM_ROLE_/, '').toLowerCase();
  return (TEAM_ROLES as readonly string[]).includes(name ?? '') ? (name as TeamRoleName) : null;
}

export function teamRoleFromName(name: TeamRoleName): TeamRole {
  return `TEAM_ROLE_${name.toUpperCase()}` as TeamRole;
}

export function platformRoleName(role: PlatformRole | undefined): PlatformRoleName | null {
  const name = role?.replace(/^PLATFORM_ROLE_/, '').toLowerCase();
  return (PLATFORM_ROLES as readonly string[]).includes(name ?? '') ? (name as PlatformRoleName) : null;
}

export function platformRoleFromName(name: PlatformRoleName | null): PlatformRole {
  return name === null ? PlatformRole.PLATFORM_ROLE_UNSPECIFIED : (`PLATFORM_ROLE_${name.toUpperCase()}` as PlatformRole);
}

export function apiKeyKindName(kind: ApiKeyKind): 'personal' | 'service' {
  return kind === ApiKeyKind.API_KEY_KIND_PERSONAL ? 'personal' : 'service';
}
