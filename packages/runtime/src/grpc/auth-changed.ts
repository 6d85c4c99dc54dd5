import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { authChangedElsewhere, authChangesMadeHere } from '../cache/auth-generation';

/**
 * Trailing metadata of an answer during which the answering process moved the auth generation. Edges remember
 * authentications until the generation moves, and learn that from an announcement on the cache; the edge that
 * carried the change (a member removed) must not wait for it, or the caller's next request could still be
 * accepted on what it remembered. So the answer itself says so, over the wire as through the local channel.
 */
export const AUTH_CHANGED_KEY = 'x-platform-auth-changed';

/** Server side, at a call's start: the trailer to send with its answer, if the generation moved meanwhile. */
export function authChangeTrailer(): () => Metadata | undefined {
  const before = authChangesMadeHere();
  return () => {
    if (authChangesMadeHere() === before) return undefined;
    const trailer = new Metadata();
    trailer.set(AUTH_CHANGED_KEY, '1');
    return trailer;
  };
}

/** Client side, on a call's status: the service moved the generation, so this process's views move on now. */
export function noteAuthChange(status: Pick<StatusObject, 'metadata'>): void {
  if (status.metadata?.get(AUTH_CHANGED_KEY).length) authChangedElsewhere();
}
