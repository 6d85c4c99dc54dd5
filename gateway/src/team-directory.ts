import type { Team } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, type ServiceClients } from '@platform/runtime';

/** Looks teams up by id for one request. */
export type TeamDirectory = (teamId: string) => Promise<Team | null>;

/**
 * Teams by id for the life of one request: each asked of identity once, lookups of distinct teams in parallel.
 * A list names the same few teams on many rows; this keeps it to one gRPC call per distinct team. A team that
 * no longer exists is null.
 */
export function teamDirectory(clients: Pick<ServiceClients, 'identity'>): TeamDirectory {
  const known = new Map<string, Promise<Team | null>>();
  return (teamId) => {
    let team = known.get(teamId);
    if (!team) {
      team = clients.identity.getTeam({ teamRef: teamId }).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'not_found') return null;
        throw error;
      });
      known.set(teamId, team);
    }
    return team;
  };
}

/** Every distinct team among `teamIds`, looked up in parallel, by id (unknown ones left out). */
export async function teamsById(directory: TeamDirectory, teamIds: Iterable<string>): Promise<Map<string, Team>> {
  const ids = [...new Set(teamIds)];
  const teams = await Promise.all(ids.map((id) => directory(id)));
  return new Map(teams.filter((team): team is Team => team !== null).map((team) => [team.id, team]));
}
