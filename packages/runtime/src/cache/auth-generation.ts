import type { Logger } from '../logging/logger';
import type { Cache } from './port';
import { SharedGeneration, type GenerationView } from './shared-generation';

/**
 * The auth generation: changes whenever anything that decides authentication changes (a key revoked, a person
 * suspended, a membership removed, a service account disabled, a session ended, a gateway disabled). Edges may
 * remember who a credential belongs to only while it is unchanged (gateway/src/auth/remembered.ts), so such a
 * change takes effect at the next request on every replica. How it is kept and followed: shared-generation.ts.
 */
export const authGeneration = new SharedGeneration('auth');

export function readAuthGeneration(cache: Cache): Promise<string | null> {
  return authGeneration.read(cache);
}

export function bumpAuthGeneration(cache: Cache): Promise<void> {
  return authGeneration.bump(cache);
}

/** After a committed change that may make a remembered authentication wrong (see SharedGeneration.moveAfterCommit). */
export function authChangeCommitted(deps: { cache: Cache; logger: Logger }): Promise<void> {
  return authGeneration.moveAfterCommit(deps);
}

/** This process's view of the auth generation (one per cache instance). */
export function authGenerationOf(cache: Cache): GenerationView {
  return authGeneration.viewOf(cache);
}
