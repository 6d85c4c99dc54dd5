import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { SharedGeneration } from '../cache/shared-generation';

/**
 * Trailing metadata of an answer during which the answering process moved shared generations (the names,
 * comma-separated: `auth`, `catalog`). Edges remember authentications and gateways' configurations until a
 * generation moves, and learn that from an announcement on the cache; the edge that carried the change (a member
 * removed, a capability's approval revoked) must not wait for it, or the caller's next request could still be served
 * on what it remembered. So the answer itself says so, over the wire as through the local channel.
 */
export const GENERATIONS_MOVED_KEY = 'x-platform-generations-moved';

/** Server side, at a call's start: the trailer to send with its answer, if a generation moved meanwhile. */
export function generationsMovedTrailer(): () => Metadata | undefined {
  const before = [...SharedGeneration.all()].map((generation) => [generation, generation.changesMadeHere()] as const);
  return () => {
    const moved = before.filter(([generation, count]) => generation.changesMadeHere() !== count).map(([generation]) => generation.name);
    if (moved.length === 0) return undefined;
    const trailer = new Metadata();
    trailer.set(GENERATIONS_MOVED_KEY, moved.join(','));
    return trailer;
  };
}

/** Client side, on a call's status: the service moved these generations, so this process's views move on now. */
export function noteGenerationsMoved(status: Pick<StatusObject, 'metadata'>): void {
  const [moved] = status.metadata?.get(GENERATIONS_MOVED_KEY) ?? [];
  if (typeof moved !== 'string') return;
  for (const name of moved.split(',')) SharedGeneration.named(name)?.changedElsewhere();
}
