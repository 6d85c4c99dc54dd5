import { PLATFORM_TEAM_ID } from '@platform/runtime';
import { SCHEMA } from '../deps';

/** What decides whether a platform server is offered to a team: the team's id and whether it is a personal workspace. */
export interface TeamAudience {
  teamId: string;
  personal: boolean;
}

/**
 * SQL condition "server `alias` is offered to the team": its own servers, or platform servers offered to all
 * teams, to this team by name, or (when the team is a personal workspace) to personal workspaces.
 * `teamParam` and `personalParam` are the placeholders ($n) bound to TeamAudience.teamId and .personal.
 */
export function offeredToTeamSql(alias: string, teamParam: string, personalParam: string): string {
  return `(${alias}.team_id = ${teamParam}
    OR (${alias}.team_id = '${PLATFORM_TEAM_ID}' AND (
      ${alias}.visibility = 'all'
      OR (${personalParam}::boolean AND ${alias}.personal)
      OR EXISTS (SELECT 1 FROM ${SCHEMA}.mcp_server_teams t WHERE t.server_id = ${alias}.id AND t.team_id = ${teamParam}))))`;
}
