import type { RoleName } from '../store/mappers';

export const SCOPES = ['query', 'ingest', 'manage'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes a personal key may carry for its person's role (§5.1): member query; editor +ingest; admin/owner all. */
export function scopesAllowedFor(role: RoleName): readonly Scope[] {
  switch (role) {
    case 'owner':
    case 'admin':
      return SCOPES;
    case 'editor':
      return ['query', 'ingest'];
    case 'member':
      return ['query'];
  }
}
