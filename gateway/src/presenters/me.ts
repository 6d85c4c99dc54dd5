import { z } from 'zod';
import type { Me } from '@platform/proto/gen/platform/identity/v1/identity';
import { platformRoleName, PLATFORM_ROLES, teamRoleName, TEAM_ROLES } from '../auth/roles';
import { personSchema, presentPerson } from './person';
import { presentTeam, teamSchema } from './team';

export const meSchema = z
  .object({
    person: personSchema,
    teams: z
      .array(z.object({ team: teamSchema, role: z.enum(TEAM_ROLES) }).meta({ id: 'MeTeam' }))
      .describe('Teams the person belongs to (not archived), with their role; the personal workspace is apart.'),
    personalTeam: teamSchema.nullable().describe("The person's personal workspace."),
    platformRole: z.enum(PLATFORM_ROLES).nullable(),
    csrfToken: z
      .string()
      .nullable()
      .describe('Send as X-CSRF-Token on every write made with this browser session; null for API keys.'),
  })
  .meta({ id: 'Me' });

export type MeJson = z.infer<typeof meSchema>;

export function presentMe(me: Me, csrfToken: string | null): MeJson {
  const person = presentPerson(me.person!);
  return {
    person,
    teams: me.teams.flatMap((t) => {
      const role = teamRoleName(t.role);
      return t.team && role ? [{ team: presentTeam(t.team), role }] : [];
    }),
    personalTeam: me.personalTeam ? presentTeam(me.personalTeam) : null,
    platformRole: platformRoleName(me.person?.platformRole),
    csrfToken,
  };
}

export const authConfigSchema = z
  .object({
    instanceName: z.string(),
    appUrl: z.string(),
    signInMethods: z.array(z.enum(['password'])),
  })
  .meta({ id: 'AuthConfig' });
