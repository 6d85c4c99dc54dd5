import { z } from 'zod';
import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { orNull, timestamp, toNumber, uuid } from './common';

export const teamSchema = z
  .object({
    id: uuid,
    slug: z.string(),
    name: z.string(),
    kind: z.enum(['team', 'personal', 'platform']).describe('`personal`: one person\'s workspace; `platform`: platform-level resources'),
    archived: z.boolean(),
    archivedAt: timestamp.nullable(),
    memberCount: z.number().int(),
    revision: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Team' });

export type TeamJson = z.infer<typeof teamSchema>;

export function presentTeam(team: Team): TeamJson {
  return {
    id: team.id,
    slug: team.slug,
    name: team.name,
    kind: team.kind as TeamJson['kind'],
    archived: team.archived,
    archivedAt: orNull(team.archivedAt),
    memberCount: toNumber(team.memberCount),
    revision: toNumber(team.revision),
    createdAt: team.createdAt ?? '',
    updatedAt: team.updatedAt ?? '',
  };
}

/** The compact team reference other resources embed (§2.1 `team`). */
export const teamRefSchema = z.object({ id: uuid, slug: z.string(), name: z.string(), kind: z.string() }).meta({ id: 'TeamRef' });
