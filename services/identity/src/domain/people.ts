import { randomUUID } from 'node:crypto';
import { AppError, auditContext, authChangeCommitted, type Transaction } from '@platform/runtime';
import { recordAudit } from './audit';
import type { RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { PLATFORM_TEAM_ID, type IdentityDeps } from '../deps';
import { toPerson, type PersonRow } from '../store/mappers';
import { findPersonByEmail, insertPerson } from '../store/people-store';
import { insertMembership, insertTeam } from '../store/teams-store';
import { hashPassword, passwordProblem } from './passwords';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NewPerson {
  email: string;
  displayName: string;
  password: string | null;
  platformRole: PersonRow['platform_role'];
}

/** The slug of a person's personal workspace: stable and derived from their id. */
export function personalTeamSlug(personId: string): string {
  return `personal-${personId.replace(/-/g, '').slice(0, 12)}`;
}

/**
 * Creates a person with their personal workspace (a team of kind `personal` they alone own), audited as
 * `person.create` on the platform team. Runs in the caller's transaction.
 */
export async function createPerson(tx: Transaction, input: NewPerson, context: RequestContext | undefined): Promise<PersonRow> {
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 254) throw AppError.invalid('Invalid email address', [{ field: 'email', problem: 'must be an email address' }]);
  const displayName = input.displayName.trim();
  if (!displayName || displayName.length > 100) {
    throw AppError.invalid('Invalid display name', [{ field: 'displayName', problem: 'must be 1 to 100 characters' }]);
  }
  if (input.password !== null) {
    const problem = passwordProblem(input.password);
    if (problem) throw AppError.invalid(`Password ${problem}`, [{ field: 'password', problem }]);
  }
  if (await findPersonByEmail(tx, email)) throw AppError.conflict('A person with this email already exists');

  const id = randomUUID();
  const person = await insertPerson(tx, {
    id,
    email,
    displayName,
    passwordHash: input.password === null ? null : await hashPassword(input.password),
    platformRole: input.platformRole,
  });
  const teamId = randomUUID();
  await insertTeam(tx, { id: teamId, slug: personalTeamSlug(id), name: `${displayName}'s workspace`, kind: 'personal', personalOwnerId: id });
  await insertMembership(tx, teamId, id, 'owner');
  await recordAudit(tx, {
    ...auditContext(context),
    teamId: PLATFORM_TEAM_ID,
    action: 'person.create',
    target: { type: 'person', id, label: email },
    after: { email, displayName, platformRole: input.platformRole },
  });
  return person;
}

/**
 * Makes `email` a platform admin with `password`: creates the person, or promotes and resets an existing one
 * (reactivating them). Used at first start (BOOTSTRAP_ADMIN_*) and by the `create-admin` command.
 */
export async function createOrResetAdmin(deps: IdentityDeps, email: string, password: string): Promise<{ created: boolean; personId: string }> {
  const problem = passwordProblem(password);
  if (problem) throw AppError.invalid(`Password ${problem}`, [{ field: 'password', problem }]);
  const outcome = await deps.db.transaction(async (tx) => {
    const existing = await findPersonByEmail(tx, email);
    if (!existing) {
      const person = await createPerson(tx, { email, displayName: email.split('@')[0]!, password, platformRole: 'admin' }, undefined);
      return { created: true, personId: person.id };
    }
    await tx.query(
      `UPDATE identity.people SET platform_role = 'admin', status = 'active', password_hash = $2,
         revision = revision + 1, updated_at = now() WHERE id = $1`,
      [existing.id, await hashPassword(password)],
    );
    await recordAudit(tx, {
      ...auditContext(undefined),
      teamId: PLATFORM_TEAM_ID,
      action: 'person.admin_reset',
      target: { type: 'person', id: existing.id, label: existing.email },
      before: { platformRole: existing.platform_role, status: existing.status },
      after: { platformRole: 'admin', status: 'active', passwordChanged: true },
    });
    return { created: false, personId: existing.id };
  });
  // A reset changes the person's role and status: edges must not keep answering from what they remembered.
  if (!outcome.created) await authChangeCommitted(deps);
  return outcome;
}

/** At start: when BOOTSTRAP_ADMIN_EMAIL and _PASSWORD are set and no platform admin exists, create one. */
export async function ensureBootstrapAdmin(
  deps: IdentityDeps,
  env: { BOOTSTRAP_ADMIN_EMAIL?: string | undefined; BOOTSTRAP_ADMIN_PASSWORD?: string | undefined },
): Promise<void> {
  const email = env.BOOTSTRAP_ADMIN_EMAIL?.trim();
  const password = env.BOOTSTRAP_ADMIN_PASSWORD;
  if (!email || !password) return;
  await deps.db.withAdvisoryLock('identity:bootstrap-admin', async (db) => {
    const { rows } = await db.query("SELECT 1 FROM identity.people WHERE platform_role = 'admin' AND status = 'active' LIMIT 1");
    if (rows.length > 0) return;
    const { personId } = await createOrResetAdmin(deps, email, password);
    deps.logger.warn({ personId }, 'created the bootstrap platform admin from BOOTSTRAP_ADMIN_EMAIL; change its password');
  });
}

export { toPerson };
