import type { GetMeRequest, Me, MeTeam, Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { teamRoleOf, toPerson, toTeam } from '../store/mappers';
import { teamsOfPerson } from '../store/people-admin-store';
import { findPersonById } from '../store/people-store';

/** The person with the teams they belong to (personal workspace apart) and their role in each. */
export async function getMe(deps: IdentityDeps, request: GetMeRequest): Promise<Me> {
  const person = request.personId ? await findPersonById(deps.db, request.personId) : null;
  if (!person) throw AppError.notFound('Person');
  const teams: MeTeam[] = [];
  let personalTeam: Team | undefined;
  for (const row of await teamsOfPerson(deps.db, person.id)) {
    if (row.kind === 'personal' && row.personal_owner_id === person.id) personalTeam = toTeam(row);
    else teams.push({ team: toTeam(row), role: teamRoleOf(row.role) });
  }
  return { person: toPerson(person), teams, ...(personalTeam ? { personalTeam } : {}) };
}
