import { randomUUID } from 'node:crypto';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import type { SignInRequest, SignInResponse } from '@platform/proto/gen/platform/identity/v1/identity';
import { AppError, auditContext } from '@platform/runtime';
import { recordAudit } from './audit';
import { PLATFORM_TEAM_ID, type IdentityDeps } from '../deps';
import { iso, toPerson, type PersonRow } from '../store/mappers';
import { findPersonByEmail } from '../store/people-store';
import { insertSession, recordSignIn } from '../store/sessions-store';
import { newSessionToken } from './credentials';
import { decoyPasswordHash, verifyPassword } from './passwords';
import { assertNotLocked, countAttempt, forgiveAttempt } from './sign-in-throttle';

/** One answer for every failure, so it never tells whether an account exists, is suspended or has a password. */
const INVALID = () => AppError.unauthenticated('Invalid email or password');

/**
 * Checks a person's password and starts a browser session. The token is returned once; only its digest is
 * stored. Audited as `session.sign_in` on the platform team (sign-ins are a platform security matter).
 */
export async function signIn(deps: IdentityDeps, request: SignInRequest): Promise<SignInResponse> {
  const email = request.email.trim().toLowerCase();
  const clientIp = request.clientIp.slice(0, 100);
  await assertNotLocked(deps.cache, email, clientIp);
  await countAttempt(deps.cache, email, clientIp);

  const person = email ? await findPersonByEmail(deps.db, email) : null;
  // Always run scrypt once, against a decoy when there is no hash, so timing does not reveal the account.
  const passwordMatches = await verifyPassword(request.password, person?.password_hash ?? (await decoyPasswordHash()));
  if (!person || !person.password_hash || !passwordMatches || person.status !== 'active') throw INVALID();
  await forgiveAttempt(deps.cache, email, clientIp);

  const token = newSessionToken();
  const sessionId = randomUUID();
  const userAgent = request.userAgent.slice(0, 512);
  const { expiresAt, signedIn } = await deps.db.transaction(async (tx) => {
    const expires = await insertSession(tx, {
      id: sessionId,
      tokenDigest: deps.secrets.digester.digest(token),
      personId: person.id,
      clientIp,
      userAgent,
      ttlSeconds: deps.config.env.SESSION_TTL,
    });
    await recordSignIn(tx, person.id);
    await recordAudit(tx, {
      ...auditContext({
        requestId: request.requestId,
        clientIp,
        viaKind: 'session',
        viaName: '',
        actor: actorOf(person),
      }),
      teamId: PLATFORM_TEAM_ID,
      action: 'session.sign_in',
      target: { type: 'person', id: person.id, label: person.email },
      metadata: { sessionId, userAgent },
    });
    return { expiresAt: expires, signedIn: { ...person, last_sign_in_at: new Date() } };
  });
  return { sessionToken: token, expiresAt: iso(expiresAt), person: toPerson(signedIn) };
}

function actorOf(person: PersonRow) {
  return {
    kind: ActorKind.ACTOR_KIND_USER,
    userId: person.id,
    displayName: person.display_name,
    email: person.email,
    apiKeyName: '',
    serviceAccountId: '',
  };
}
