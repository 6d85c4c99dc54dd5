import type {
  AddMemberRequest,
  ListMembersRequest,
  ListMembersResponse,
  Member,
  RemoveMemberRequest,
  RemoveMemberResponse,
  UpdateMemberRequest,
} from '@platform/proto/gen/platform/identity/v1/identity';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, auditContext, encodeCursor, type Transaction } from '@platform/runtime';
import { recordAudit } from './audit';
import type { IdentityDeps } from '../deps';
import { teamRoleName, type PersonRow, type RoleName, type TeamRow } from '../store/mappers';
import {
  addMembership,
  countOwners,
  deleteMembership,
  findMember,
  listMemberRows,
  revokePersonalKeys,
  setMemberRole,
  toMember,
  type MemberRow,
} from '../store/membership-store';
import { findPersonByEmail, findPersonById } from '../store/people-store';
import { isUuid, lockTeam, pageLimit, readCursor } from '../store/team-admin-store';
import { findTeamById } from '../store/teams-store';
import { expectedRevision, teamArchivedError } from './teams';

/*
 * Membership rules:
 * - a personal workspace is its person's alone: no member is added, changed or removed (409 conflict);
 * - the platform team's membership is managed like any team's (by its owners and admins, and platform admins);
 * - an archived team refuses every membership change (409 team_archived);
 * - only owners grant, change or take away the owner role (the edge sends the caller's role);
 * - a team never loses its last owner (409 conflict);
 * - every change holds the team's row lock (lockTeam), so concurrent changes are decided one at a time.
 */

export async function listMembers(deps: IdentityDeps, request: ListMembersRequest): Promise<ListMembersResponse> {
  if (!isUuid(request.teamId) || !(await findTeamById(deps.db, request.teamId))) throw AppError.notFound('Team');
  const limit = pageLimit(request.page);
  const after = readCursor(request.page, memberPosition);
  const rows = await listMemberRows(deps.db, request.teamId, after, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor({ email: last.email.toLowerCase(), id: last.id }) : '';
  return { members: page.map(toMember), page: { nextCursor } };
}

function memberPosition(value: unknown): { email: string; id: string } | null {
  const position = value as { email?: unknown; id?: unknown } | null;
  return typeof position?.email === 'string' && typeof position.id === 'string' && isUuid(position.id)
    ? { email: position.email, id: position.id }
    : null;
}

/** Adds an existing person (by id or email) with a role. Audited as `team.member_add`. */
export async function addMember(deps: IdentityDeps, request: AddMemberRequest): Promise<Member> {
  const role = requiredRole(request.role);
  if (Boolean(request.personId) === Boolean(request.email)) {
    throw AppError.invalid('Give either personId or email', [{ field: 'personId', problem: 'give exactly one of personId and email' }]);
  }
  assertMayTouchOwnerRole(request.callerRole, role === 'owner');
  return deps.db.transaction(async (tx) => {
    const team = await changeableTeam(tx, request.teamId);
    const person = await findPerson(tx, request.personId, request.email);
    if (!(await addMembership(tx, team.id, person.id, role))) throw AppError.conflict('The person is already a member of this team');
    await audit(tx, request.context, team, person, 'team.member_add', { after: { role } });
    return toMember((await findMember(tx, team.id, person.id))!);
  });
}

/** Changes a member's role when `expected_revision` is the membership's. Audited as `team.member_role_change`. */
export async function updateMember(deps: IdentityDeps, request: UpdateMemberRequest): Promise<Member> {
  const role = requiredRole(request.role);
  const expected = expectedRevision(request.expectedRevision);
  return deps.db.transaction(async (tx) => {
    const team = await changeableTeam(tx, request.teamId);
    const member = await existingMember(tx, team.id, request.personId);
    if (member.membership_revision !== expected) throw new AppError('precondition_failed', 'The membership has changed; read it again and retry');
    if (member.role === role) return toMember(member);
    assertMayTouchOwnerRole(request.callerRole, member.role === 'owner' || role === 'owner');
    if (member.role === 'owner') await assertAnotherOwner(tx, team.id);
    if (!(await setMemberRole(tx, team.id, member.id, expected, role))) {
      throw new AppError('precondition_failed', 'The membership has changed; read it again and retry');
    }
    await audit(tx, request.context, team, member, 'team.member_role_change', { before: { role: member.role }, after: { role } });
    return toMember((await findMember(tx, team.id, member.id))!);
  });
}

/**
 * Removes a member and, in the same transaction, revokes their personal keys of the team (service keys keep
 * working, §5.1). Audited as `team.member_remove` with the number of keys revoked.
 */
export async function removeMember(deps: IdentityDeps, request: RemoveMemberRequest): Promise<RemoveMemberResponse> {
  return deps.db.transaction(async (tx) => {
    const team = await changeableTeam(tx, request.teamId);
    const member = await existingMember(tx, team.id, request.personId);
    if (member.role === 'owner') {
      // Leaving is allowed to everyone, an owner included (whose own role is then owner).
      assertMayTouchOwnerRole(request.callerRole, true);
      await assertAnotherOwner(tx, team.id);
    }
    await deleteMembership(tx, team.id, member.id);
    const revokedKeys = await revokePersonalKeys(tx, team.id, member.id);
    await audit(tx, request.context, team, member, 'team.member_remove', { before: { role: member.role }, metadata: { revokedKeys } });
    return { revokedKeys };
  });
}

/** The team, locked, when its membership may change. */
async function changeableTeam(tx: Transaction, teamId: string): Promise<TeamRow> {
  const team = isUuid(teamId) ? await lockTeam(tx, teamId) : null;
  if (!team) throw AppError.notFound('Team');
  if (team.kind === 'personal') throw AppError.conflict('A personal workspace belongs to its person alone; its members cannot change');
  if (team.archived_at) throw teamArchivedError();
  return team;
}

async function existingMember(tx: Transaction, teamId: string, personId: string): Promise<MemberRow> {
  const member = isUuid(personId) ? await findMember(tx, teamId, personId) : null;
  if (!member) throw AppError.notFound('Member');
  return member;
}

async function findPerson(tx: Transaction, personId: string, email: string): Promise<PersonRow> {
  const person = personId ? (isUuid(personId) ? await findPersonById(tx, personId) : null) : await findPersonByEmail(tx, email.trim());
  if (!person) throw AppError.notFound('Person');
  return person;
}

function requiredRole(role: AddMemberRequest['role']): RoleName {
  const name = teamRoleName(role);
  if (!name) throw AppError.invalid('Invalid role', [{ field: 'role', problem: 'must be one of owner, admin, editor, member' }]);
  return name;
}

function assertMayTouchOwnerRole(callerRole: AddMemberRequest['callerRole'], touchesOwner: boolean): void {
  if (touchesOwner && teamRoleName(callerRole) !== 'owner') throw AppError.forbidden('Only team owners may grant, change or remove the owner role');
}

async function assertAnotherOwner(tx: Transaction, teamId: string): Promise<void> {
  if ((await countOwners(tx, teamId)) <= 1) throw AppError.conflict('A team must keep at least one owner; make someone else owner first');
}

async function audit(
  tx: Transaction,
  context: RequestContext | undefined,
  team: TeamRow,
  person: PersonRow,
  action: string,
  detail: { before?: unknown; after?: unknown; metadata?: Record<string, unknown> },
): Promise<void> {
  await recordAudit(tx, {
    ...auditContext(context),
    teamId: team.id,
    action,
    target: { type: 'person', id: person.id, label: person.email },
    parent: { type: 'team', id: team.id, label: team.slug },
    ...detail,
  });
}
