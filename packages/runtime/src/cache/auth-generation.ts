import { randomUUID } from 'node:crypto';
import type { Cache } from './port';

/**
 * A value that changes whenever anything that decides authentication changes (a key revoked, a person
 * suspended, a membership removed, a service account disabled, a session ended). Edges may cache who a
 * credential belongs to only while this value is unchanged, so such a change takes effect at the next request
 * on every replica. Any new value is unique, so a lost or restarted cache can only cause re-checks.
 */
const KEY = 'auth:generation';
const TTL_MS = 30 * 24 * 3600 * 1000;

export function readAuthGeneration(cache: Cache): Promise<string | null> {
  return cache.get(KEY);
}

export function bumpAuthGeneration(cache: Cache): Promise<void> {
  return cache.set(KEY, randomUUID(), TTL_MS);
}
