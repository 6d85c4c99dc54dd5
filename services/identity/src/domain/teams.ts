import { randomUUID } from 'node:crypto';
import type { CreateTeamRequest, GetTeamRequest, ListTeamsRequest, ListTeamsResponse, Team, TeamRole, UpdateTeamRequest } from '@platform/proto/gen/platform/identity/v1/identity';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, auditContext, encodeCursor, type Transaction } from '@platform/runtime';
import { recordAudit } from './audit';
import type { IdentityDeps } from '../deps';
import { teamRoleOf, toTeam, type RoleName, type TeamRow } from '../store/mappers';
import { findPersonById } from '../store/people-store';
import { isUniqueViolation, isUuid, listTeamRows, lockTeam, pageLimit, readCursor, slugTaken, updateTeamRow } from '../store/team-admin-store';
import { findTeamById, findTeamByRef, insertMembership, insertTeam, shareLockTeam } from '../store/teams-store';

/** 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit. */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const KINDS = ['team', 'personal', 'platform'] as const;

export function slugProblem(slug: string): string | null {
  if (!SLUG.test(slug)) return 'must be 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit';
  // `{team}` accepts a slug or an id, so a slug shaped like an id would be ambiguous.
  if (isUuid(slug)) return 'must not look like a UUID';
  return null;
}

/** A team name, trimmed: 1 to 100 characters. */
export function validTeamName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 100) throw AppError.invalid('Invalid team name', [{ field: 'name', problem: 'must be 1 to 100 characters' }]);
  return trimmed;
}

export function teamArchivedError(): AppError {
  return new AppError('team_archived', 'The team is archived; unarchive it first');
}

/**
 * Inside a change's transaction: the team exists and is not archived (docs/api.md: archived teams refuse changes,
 * 409 team_archived), and is not archived until the change commits (shareLockTeam).
 */
export async function assertWritableTeam(tx: Transaction, teamId: string): Promise<TeamRow> {
  const team = isUuid(teamId) ? await shareLockTeam(tx, teamId) : null;
  if (!team) throw AppError.notFound('Team');
  if (team.archived_at) throw teamArchivedError();
  return team;
}

/**
 * Creates a team of kind `team` whose first owner is `ownerPersonId` (a platform admin creating a team for
 * someone) or else the calling person. Audited as `team.create` in the new team's log.
 */
export async function createTeam(deps: IdentityDeps, request: CreateTeamRequest): Promise<Team> {
  const slug = request.slug;
  const problem = slugProblem(slug);
  if (problem) throw AppError.invalid('Invalid team slug', [{ field: 'slug', problem }]);
  const name = validTeamName(request.name);
  const actor = request.context?.actor;
  const ownerId = request.ownerPersonId || (actor?.kind === ActorKind.ACTOR_KIND_USER ? actor.userId : '');
  if (!ownerId) throw AppError.invalid('A team needs an owner', [{ field: 'ownerId', problem: 'is required when the caller is not a person' }]);
  if (!isUuid(ownerId)) throw AppError.notFound('Person');

  try {
    return await deps.db.transaction(async (tx) => {
      const owner = await findPersonById(tx, ownerId);
      if (!owner) throw AppError.notFound('Person');
      if (await slugTaken(tx, slug)) throw slugTakenError();
      const id = randomUUID();
      await insertTeam(tx, { id, slug, name, kind: 'team', personalOwnerId: null });
      await insertMembership(tx, id, owner.id, 'owner');
      await recordAudit(tx, {
        ...auditContext(request.context),
        teamId: id,
        action: 'team.create',
        target: { type: 'team', id, label: slug },
        after: { slug, name, ownerId: owner.id, ownerEmail: owner.email },
      });
      return toTeam((await findTeamById(tx, id))!);
    });
  } catch (error) {
    // Two creations of one slug at once: the unique index decides, the loser gets the same answer.
    if (isUniqueViolation(error)) throw slugTakenError();
    throw error;
  }
}

function slugTakenError(): AppError {
  return AppError.conflict('slug already taken');
}

export async function getTeam(deps: IdentityDeps, request: GetTeamRequest): Promise<Team> {
  const team = request.teamRef ? await findTeamByRef(deps.db, request.teamRef) : null;
  if (!team) throw AppError.notFound('Team');
  return toTeam(team);
}

/** Teams by slug: one person's, or every team (platform staff), without archived ones unless asked. */
export async function listTeams(deps: IdentityDeps, request: ListTeamsRequest): Promise<ListTeamsResponse> {
  const kind = request.kind || null;
  if (kind !== null && !(KINDS as readonly string[]).includes(kind)) {
    throw AppError.invalid('Invalid team kind', [{ field: 'kind', problem: `must be one of ${KINDS.join(', ')}` }]);
  }
  const limit = pageLimit(request.page);
  const after = readCursor(request.page, slugPosition);
  if (request.memberPersonId && !isUuid(request.memberPersonId)) return { teams: [], page: { nextCursor: '' }, roles: [] };
  const rows = await listTeamRows(
    deps.db,
    { memberPersonId: request.memberPersonId || null, includeArchived: request.includeArchived, kind: kind as TeamRow['kind'] | null },
    after,
    limit + 1,
  );
  const page = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeCursor({ slug: page[page.length - 1]!.slug }) : '';
  const roles = request.roleOfPersonId && isUuid(request.roleOfPersonId) ? await rolesIn(deps.db, page, request.roleOfPersonId) : [];
  return { teams: page.map(toTeam), page: { nextCursor }, roles };
}

/** A person's role in each of `teams`, in order (UNSPECIFIED where they have none). */
async function rolesIn(db: IdentityDeps['db'], teams: TeamRow[], personId: string): Promise<TeamRole[]> {
  if (teams.length === 0) return [];
  const { rows } = await db.query<{ team_id: string; role: RoleName }>(
    'SELECT team_id, role FROM identity.memberships WHERE person_id = $1 AND team_id = ANY($2::uuid[])',
    [personId, teams.map((team) => team.id)],
  );
  const byTeam = new Map(rows.map((row) => [row.team_id, row.role]));
  return teams.map((team) => teamRoleOf(byTeam.get(team.id)));
}

function slugPosition(value: unknown): string | null {
  const slug = (value as { slug?: unknown } | null)?.slug;
  return typeof slug === 'string' ? slug : null;
}

/**
 * Renames a team and/or archives or unarchives it, when `expected_revision` is current. Personal workspaces
 * and the platform team are never archived; an archived team is not renamed (unless the same change
 * unarchives it). Audited as `team.update` (name before/after), `team.archive`, `team.unarchive`.
 */
export async function updateTeam(deps: IdentityDeps, request: UpdateTeamRequest): Promise<Team> {
  const expected = expectedRevision(request.expectedRevision);
  const requestedName = request.name === undefined ? undefined : validTeamName(request.name);
  return deps.db.transaction(async (tx) => {
    const team = (isUuid(request.teamId) ? await lockTeam(tx, request.teamId) : null) ?? throwNotFound();
    if (team.revision !== expected) throw new AppError('precondition_failed', 'The team has changed; read it again and retry');
    const wasArchived = team.archived_at !== null;
    const rename = requestedName !== undefined && requestedName !== team.name;
    const archiving = request.archived !== undefined && request.archived !== wasArchived;
    if (archiving && team.kind !== 'team') throw AppError.conflict(`A ${team.kind === 'personal' ? 'personal workspace' : 'platform team'} cannot be archived`);
    if (rename && wasArchived && !(archiving && request.archived === false)) throw teamArchivedError();
    if (!rename && !archiving) return toTeam(team);

    const updated = await updateTeamRow(tx, team.id, expected, { name: rename ? requestedName! : null, archived: archiving ? request.archived! : null });
    await auditTeamChange(tx, request, team, updated, rename, archiving);
    return toTeam(updated);
  });
}

async function auditTeamChange(tx: Transaction, request: UpdateTeamRequest, before: TeamRow, after: TeamRow, renamed: boolean, archivedChanged: boolean) {
  const common = { ...auditContext(request.context), teamId: before.id, target: { type: 'team', id: before.id, label: after.slug } };
  if (renamed) await recordAudit(tx, { ...common, action: 'team.update', before: { name: before.name }, after: { name: after.name } });
  if (archivedChanged) await recordAudit(tx, { ...common, action: after.archived_at ? 'team.archive' : 'team.unarchive' });
}

/**
 * The If-Match revision an update was sent with; the edge always sends one. Revisions start at 1, so a `0` can
 * match nothing: stale (412), not missing (428).
 */
export function expectedRevision(value: string): string {
  if (value === '') throw new AppError('precondition_required', 'This update needs If-Match with the current revision');
  if (!/^[1-9][0-9]{0,17}$/.test(value)) throw new AppError('precondition_failed', 'The resource has changed since it was read; fetch it again and retry');
  return value;
}

function throwNotFound(): never {
  throw AppError.notFound('Team');
}
