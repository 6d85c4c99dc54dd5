import { McpHttpError } from './http-errors';

/** JSON-RPC's generic server error, as for the other refusals of the transport. */
const OVER_CAP_CODE = -32000;

/**
 * How many of one kind of thing (POSTs in flight, GET streams) each person holds on this replica, against a cap. Every
 * one of them holds sockets to the client and its upstreams, so without a cap one person could take the edge's file
 * descriptors and memory from everyone else. Counted per replica, in memory: the cap bounds what one edge holds,
 * needs no shared state, and costs a map lookup per request.
 */
export class PersonCounter {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly cap: number,
    private readonly what: string,
  ) {}

  /** Claims `count` for the person, or refuses with 429 when that would exceed the cap; returns the release (call once). */
  claim(personId: string, count = 1): () => void {
    const now = this.held.get(personId) ?? 0;
    if (now + count > this.cap) {
      throw new McpHttpError(429, OVER_CAP_CODE, `Too Many Requests: at most ${this.cap} ${this.what} per person at a time`, { 'retry-after': '1' });
    }
    this.held.set(personId, now + count);
    return () => {
      const left = (this.held.get(personId) ?? count) - count;
      if (left > 0) this.held.set(personId, left);
      else this.held.delete(personId);
    };
  }

  /** What the person holds now (tests, metrics). */
  heldBy(personId: string): number {
    return this.held.get(personId) ?? 0;
  }
}
