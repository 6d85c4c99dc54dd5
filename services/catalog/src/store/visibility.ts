import { PLATFORM_TEAM_ID } from '@platform/runtime';
import { SCHEMA } from '../deps';

/** What decides whether a platform server is offered to a team: the team's id and whether it is a personal workspace. */
export interface TeamAudience {
  teamId: string;
  personal: boolean;
}

/**
 * SQL condition "server `alias` is offered to the team": its own servers, or platform servers offered to it. For
 * platform servers `visibility` governs teams (`all`, or the teams named) and `personal` governs personal
 * workspaces: a personal workspace is offered one that is `personal` or names it (visibility `teams`), any other
 * team one of visibility `all` or naming it. So `all` does not reach personal workspaces unless the server is also
 * `personal`: a server meant for teams is not offered to everyone's private workspace unless an admin says so
 * (docs/catalog.md, Who is offered a platform server). The named teams count only under visibility `teams` (op 16 keeps the list
 * while visibility is `all`). `teamParam` and `personalParam` are the placeholders ($n) bound to TeamAudience.teamId
 * and .personal.
 */
export function offeredToTeamSql(alias: string, teamParam: string, personalParam: string): string {
  return `(${alias}.team_id = ${teamParam}
    OR (${alias}.team_id = '${PLATFORM_TEAM_ID}' AND (
      CASE WHEN ${personalParam}::boolean THEN ${alias}.personal ELSE ${alias}.visibility = 'all' END
      OR (${alias}.visibility = 'teams'
          AND EXISTS (SELECT 1 FROM ${SCHEMA}.mcp_server_teams t WHERE t.server_id = ${alias}.id AND t.team_id = ${teamParam})))))`;
}
