import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import type {
  CreatePersonRequest,
  GetPersonRequest,
  ListPeopleRequest,
  ListPeopleResponse,
  Person,
  UpdatePersonRequest,
} from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext, decodeCursor, encodeCursor, TOPICS, writeEvent, type Transaction } from '@platform/runtime';
import { recordAudit } from './audit';
import { PLATFORM_TEAM_ID, SCHEMA, type IdentityDeps } from '../deps';
import { platformRoleName, toPerson, type PersonRow } from '../store/mappers';
import { listPeopleRows, lockPerson, personChangesTo, updatePersonRow, type PersonChanges } from '../store/people-admin-store';
import { findPersonById } from '../store/people-store';
import { endSessionsOfPerson } from '../store/sessions-store';
import { createPerson } from './people';
import { hashPassword, passwordProblem } from './passwords';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

export async function createPersonByAdmin(deps: IdentityDeps, request: CreatePersonRequest): Promise<Person> {
  const row = await deps.db.transaction((tx) =>
    createPerson(
      tx,
      {
        email: request.email,
        displayName: request.displayName,
        password: request.password ? request.password : null,
        platformRole: platformRoleName(request.platformRole),
      },
      request.context,
    ),
  );
  return toPerson(row);
}

/**
 * The opaque cursor of the people list: the last lower-cased email of the previous page. Read by the runtime's
 * cursor reader, which also refuses what PostgreSQL could not compare (a NUL).
 */
function decodePeopleCursor(cursor: string): string | null {
  if (!cursor) return null;
  return decodeCursor(cursor, (value) => {
    const email = (value as { e?: unknown } | null)?.e;
    return typeof email === 'string' ? email : null;
  });
}

export async function listPeople(deps: IdentityDeps, request: ListPeopleRequest): Promise<ListPeopleResponse> {
  const limit = Math.min(Math.max(request.page?.pageSize || DEFAULT_PAGE, 1), MAX_PAGE);
  const rows = await listPeopleRows(deps.db, { afterEmail: decodePeopleCursor(request.page?.cursor ?? ''), limit, query: request.query.trim() });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor({ e: last.email.toLowerCase() }) : '';
  return { people: page.map(toPerson), page: { nextCursor } };
}

export async function getPerson(deps: IdentityDeps, request: GetPersonRequest): Promise<Person> {
  const row = await findPersonById(deps.db, request.personId);
  if (!row) throw AppError.notFound('Person');
  return toPerson(row);
}

/**
 * Changes a person (If-Match revision). Suspension ends all their sessions in the same transaction; their
 * personal keys and OAuth tokens fail at the next request because authentication checks the person's status.
 * A password reset by someone else ends the person's sessions too. Admins cannot suspend or demote themselves,
 * so the platform always keeps the admin who is acting. A change that alters nothing keeps the revision and writes
 * no audit entry.
 */
export async function updatePerson(deps: IdentityDeps, request: UpdatePersonRequest): Promise<Person> {
  const changes = await changesOf(request);
  const actorId = request.context?.actor?.userId ?? '';
  return deps.db.transaction(async (tx) => {
    const before = await lockPerson(tx, request.personId);
    if (!before) throw AppError.notFound('Person');
    if (before.revision !== request.expectedRevision) {
      throw new AppError('precondition_failed', 'The person was changed since you read it; read it again and retry');
    }
    if (actorId === before.id) assertNoSelfLockout(before, changes);
    const differing = personChangesTo(before, changes);
    // Nothing differs (an empty PATCH, or the values they already have): the person as they are, same revision.
    if (Object.keys(differing).length === 0) return toPerson(before);
    const after = await updatePersonRow(tx, before.id, request.expectedRevision, differing);
    if (!after) throw new AppError('precondition_failed', 'The person was changed since you read it; read it again and retry');

    const suspended = before.status === 'active' && after.status === 'suspended';
    const passwordChanged = differing.passwordHash !== undefined;
    const endedSessions = suspended || (passwordChanged && actorId !== before.id) ? await endSessionsOfPerson(tx, before.id) : 0;
    await auditChanges(tx, request.context, before, after, { passwordChanged, endedSessions });
    if (before.status !== after.status) {
      // Other services (catalog, agents, knowledge) react to suspension, for example by closing connections.
      await writeEvent(tx, SCHEMA, {
        topic: TOPICS.identity,
        type: suspended ? 'person.suspended' : 'person.reactivated',
        key: before.id,
        data: { personId: before.id },
        source: SCHEMA,
      });
    }
    return toPerson(after);
  });
}

async function changesOf(request: UpdatePersonRequest): Promise<PersonChanges> {
  const changes: PersonChanges = {};
  if (request.displayName !== undefined) {
    const name = request.displayName.trim();
    if (!name || name.length > 100) throw AppError.invalid('Invalid display name', [{ field: 'displayName', problem: 'must be 1 to 100 characters' }]);
    changes.displayName = name;
  }
  if (request.status !== undefined) {
    if (request.status !== 'active' && request.status !== 'suspended') {
      throw AppError.invalid('Invalid status', [{ field: 'status', problem: 'must be "active" or "suspended"' }]);
    }
    changes.status = request.status;
  }
  if (request.platformRole !== undefined) changes.platformRole = platformRoleName(request.platformRole);
  if (request.password !== undefined) {
    const problem = passwordProblem(request.password);
    if (problem) throw AppError.invalid(`Password ${problem}`, [{ field: 'password', problem }]);
    changes.passwordHash = await hashPassword(request.password);
  }
  return changes;
}

function assertNoSelfLockout(person: PersonRow, changes: PersonChanges): void {
  if (changes.status === 'suspended') throw AppError.conflict('You cannot suspend yourself');
  if (person.platform_role === 'admin' && changes.platformRole !== undefined && changes.platformRole !== 'admin') {
    throw AppError.conflict('You cannot remove your own platform admin role; ask another admin');
  }
}

/**
 * `person.suspend` / `person.reactivate` for status changes, `person.update` for the rest (display name,
 * platform role, a password reset as the flag `passwordChanged`, never the password).
 */
async function auditChanges(
  tx: Transaction,
  context: RequestContext | undefined,
  before: PersonRow,
  after: PersonRow,
  effects: { passwordChanged: boolean; endedSessions: number },
): Promise<void> {
  const base = { ...auditContext(context), teamId: PLATFORM_TEAM_ID, target: { type: 'person', id: before.id, label: after.email } };
  if (before.status !== after.status) {
    await recordAudit(tx, {
      ...base,
      action: after.status === 'suspended' ? 'person.suspend' : 'person.reactivate',
      before: { status: before.status },
      after: { status: after.status },
      metadata: { endedSessions: after.status === 'suspended' ? effects.endedSessions : 0 },
    });
  }
  const changedBefore: Record<string, unknown> = {};
  const changedAfter: Record<string, unknown> = {};
  if (before.display_name !== after.display_name) {
    changedBefore.displayName = before.display_name;
    changedAfter.displayName = after.display_name;
  }
  if (before.platform_role !== after.platform_role) {
    changedBefore.platformRole = before.platform_role;
    changedAfter.platformRole = after.platform_role;
  }
  if (Object.keys(changedAfter).length === 0 && !effects.passwordChanged) return;
  await recordAudit(tx, {
    ...base,
    action: 'person.update',
    before: changedBefore,
    after: changedAfter,
    metadata: effects.passwordChanged ? { passwordChanged: true, endedSessions: effects.endedSessions } : {},
  });
}
