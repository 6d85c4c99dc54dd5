import type { SignOutRequest, SignOutResponse } from '@platform/proto/gen/platform/identity/v1/identity';
import type { IdentityDeps } from '../deps';
import { endSessionByDigest } from '../store/sessions-store';

/** Ends the session behind a cookie value; idempotent (an unknown or ended session is not an error). */
export async function signOut(deps: IdentityDeps, request: SignOutRequest): Promise<SignOutResponse> {
  if (request.sessionToken) await endSessionByDigest(deps.db, deps.secrets.digester.digest(request.sessionToken));
  return {};
}
