import { randomUUID } from 'node:crypto';
import type {
  CreateServiceAccountRequest,
  DeleteServiceAccountRequest,
  GetServiceAccountRequest,
  ListServiceAccountsRequest,
  ListServiceAccountsResponse,
  ServiceAccount,
  UpdateServiceAccountRequest,
} from '@platform/proto/gen/platform/identity/v1/identity';
import { TeamRole } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext, malformedCursor, type FieldError } from '@platform/runtime';
import { recordAudit } from './audit';
import { assertWritableTeam } from './teams';
import type { IdentityDeps } from '../deps';
import { pageOf, pagePosition } from '../store/api-keys-store';
import {
  deleteServiceAccountRow,
  findServiceAccount,
  insertServiceAccount,
  isUniqueViolation,
  listServiceAccounts as selectServiceAccounts,
  serviceAccountChangesTo,
  serviceAccountNameTaken,
  toServiceAccount,
  updateServiceAccountRow,
  type ServiceAccountChanges,
  type ServiceAccountRow,
} from '../store/service-accounts-store';

/** §2.14 / §8: the name pattern and description limit of a service account. */
export const SERVICE_ACCOUNT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const MAX_DESCRIPTION = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const NAME_TAKEN = () => AppError.conflict('A service account with this name already exists in the team');

/** A service account holds `member` or `editor`, never owner or admin (§2.14). */
function accountRole(role: TeamRole, problems: FieldError[]): 'member' | 'editor' | undefined {
  if (role === TeamRole.TEAM_ROLE_MEMBER) return 'member';
  if (role === TeamRole.TEAM_ROLE_EDITOR) return 'editor';
  problems.push({ field: 'role', problem: 'must be member or editor' });
  return undefined;
}

function checkName(name: string, problems: FieldError[]): void {
  if (!SERVICE_ACCOUNT_NAME.test(name)) {
    problems.push({ field: 'name', problem: 'must be 1 to 64 lowercase letters, digits or inner hyphens' });
  }
}

function checkDescription(description: string, problems: FieldError[]): void {
  if (description.length > MAX_DESCRIPTION) problems.push({ field: 'description', problem: `must be at most ${MAX_DESCRIPTION} characters` });
}

function throwIfAny(problems: FieldError[]): void {
  if (problems.length > 0) throw AppError.invalid(`Invalid service account: ${problems.map((p) => p.field).join(', ')}`, problems);
}

/** What an audit entry records of an account (it holds no secret; its keys are never listed here). */
function auditView(row: ServiceAccountRow): Record<string, unknown> {
  return { name: row.name, description: row.description, role: row.role, enabled: row.enabled };
}

export async function createServiceAccount(deps: IdentityDeps, request: CreateServiceAccountRequest): Promise<ServiceAccount> {
  const problems: FieldError[] = [];
  checkName(request.name, problems);
  checkDescription(request.description, problems);
  // An unspecified role means the least one.
  const role = request.role === TeamRole.TEAM_ROLE_UNSPECIFIED ? 'member' : accountRole(request.role, problems);
  throwIfAny(problems);

  const id = randomUUID();
  try {
    const row = await deps.db.transaction(async (tx) => {
      await assertWritableTeam(tx, request.teamId);
      if (await serviceAccountNameTaken(tx, request.teamId, request.name, null)) throw NAME_TAKEN();
      await insertServiceAccount(tx, {
        id,
        teamId: request.teamId,
        name: request.name,
        description: request.description,
        role: role!,
        enabled: request.enabled,
        createdBy: request.context?.actor?.userId || null,
      });
      const created = (await findServiceAccount(tx, request.teamId, id))!;
      await recordAudit(tx, {
        ...auditContext(request.context),
        teamId: request.teamId,
        action: 'service_account.create',
        target: { type: 'service_account', id, label: created.name },
        after: auditView(created),
      });
      return created;
    });
    return toServiceAccount(row);
  } catch (error) {
    throw isUniqueViolation(error) ? NAME_TAKEN() : error;
  }
}

export async function listServiceAccounts(deps: IdentityDeps, request: ListServiceAccountsRequest): Promise<ListServiceAccountsResponse> {
  const page = pagePosition(request.page);
  if (page.after && !UUID.test(page.after.id)) throw malformedCursor();
  const result = pageOf(await selectServiceAccounts(deps.db, request.teamId, page), page);
  return { serviceAccounts: result.rows.map(toServiceAccount), page: { nextCursor: result.nextCursor } };
}

export async function getServiceAccount(deps: IdentityDeps, request: GetServiceAccountRequest): Promise<ServiceAccount> {
  const row = UUID.test(request.serviceAccountId) ? await findServiceAccount(deps.db, request.teamId, request.serviceAccountId) : null;
  if (!row) throw AppError.notFound('Service account');
  return toServiceAccount(row);
}

/**
 * Changes an account under optimistic concurrency; an archived team's accounts do not change (409 team_archived),
 * re-enabling one included. A change that alters nothing keeps the revision and writes no audit entry. Disabling
 * takes effect at its keys' next request, since authentication reads `enabled` on every request.
 */
export async function updateServiceAccount(deps: IdentityDeps, request: UpdateServiceAccountRequest): Promise<ServiceAccount> {
  const problems: FieldError[] = [];
  const changes: ServiceAccountChanges = {};
  if (request.name !== undefined) {
    checkName(request.name, problems);
    changes.name = request.name;
  }
  if (request.description !== undefined) {
    checkDescription(request.description, problems);
    changes.description = request.description;
  }
  if (request.role !== undefined) {
    const role = accountRole(request.role, problems);
    if (role) changes.role = role;
  }
  if (request.enabled !== undefined) changes.enabled = request.enabled;
  throwIfAny(problems);
  if (!UUID.test(request.serviceAccountId)) throw AppError.notFound('Service account');

  try {
    const row = await deps.db.transaction(async (tx) => {
      await assertWritableTeam(tx, request.teamId);
      const before = await findServiceAccount(tx, request.teamId, request.serviceAccountId);
      if (!before) throw AppError.notFound('Service account');
      if (before.revision !== request.expectedRevision) throw stale();
      const differing = serviceAccountChangesTo(before, changes);
      // Nothing differs (an empty PATCH, or the values it already has): the account as it is, same revision, no entry.
      if (Object.keys(differing).length === 0) return before;
      if (differing.name !== undefined && (await serviceAccountNameTaken(tx, request.teamId, differing.name, before.id))) throw NAME_TAKEN();
      if (!(await updateServiceAccountRow(tx, request.teamId, before.id, request.expectedRevision, differing))) {
        // Changed (or deleted) between our read and our write.
        if (!(await findServiceAccount(tx, request.teamId, before.id))) throw AppError.notFound('Service account');
        throw stale();
      }
      const after = (await findServiceAccount(tx, request.teamId, before.id))!;
      await recordAudit(tx, {
        ...auditContext(request.context),
        teamId: request.teamId,
        action: 'service_account.update',
        target: { type: 'service_account', id: after.id, label: after.name },
        before: auditView(before),
        after: auditView(after),
      });
      return after;
    });
    return toServiceAccount(row);
  } catch (error) {
    throw isUniqueViolation(error) ? NAME_TAKEN() : error;
  }
}

/** Deletes an account and, with it, all its keys (they stop working at once); not in an archived team (409). */
export async function deleteServiceAccount(deps: IdentityDeps, request: DeleteServiceAccountRequest): Promise<void> {
  if (!UUID.test(request.serviceAccountId)) throw AppError.notFound('Service account');
  await deps.db.transaction(async (tx) => {
    await assertWritableTeam(tx, request.teamId);
    const before = await findServiceAccount(tx, request.teamId, request.serviceAccountId);
    if (!before || !(await deleteServiceAccountRow(tx, request.teamId, before.id))) throw AppError.notFound('Service account');
    await recordAudit(tx, {
      ...auditContext(request.context),
      teamId: request.teamId,
      action: 'service_account.delete',
      target: { type: 'service_account', id: before.id, label: before.name },
      before: auditView(before),
      metadata: { activeKeysDeleted: Number(before.active_key_count) },
    });
  });
}

function stale(): AppError {
  return new AppError('precondition_failed', 'The service account has changed since it was read; fetch it again and retry');
}
