import { setMaxListeners } from 'node:events';

/** A signal that follows others until `release`. */
export interface FirstAbort {
  signal: AbortSignal;
  /** Stops following: call it once the work the signal bounds has ended. */
  release(): void;
}

/**
 * A signal aborted as soon as any of `signals` is, with that one's reason; `release` removes its listeners on them.
 * Not AbortSignal.any: on Node 20 a signal it makes that has a listener nobody removes (the MCP SDK adds one per
 * request and never removes it) is kept for the life of the process with everything the listener holds (about 8 kB
 * per catalog health check: an SDK client and its transport), and each call leaves an entry on a source that lives
 * long (a background task's stop signal, the edge's drain) for as long as that lives (nodejs/node#55351, #64476).
 * Here the followed signals hold the new one only through listeners that `release` removes, so nothing of a finished
 * piece of work stays reachable from them.
 */
export function firstAbortOf(signals: readonly AbortSignal[]): FirstAbort {
  const first = new AbortController();
  // Every request of an exchange, or the relay of each of a gateway's upstreams, may listen to it: more than Node's
  // warning expects (10).
  setMaxListeners(Infinity, first.signal);
  const followed: Array<[AbortSignal, () => void]> = [];
  const release = () => {
    for (const [signal, listener] of followed) signal.removeEventListener('abort', listener);
    followed.length = 0;
  };
  for (const signal of signals) {
    if (signal.aborted) {
      first.abort(signal.reason);
      break;
    }
    const listener = () => {
      first.abort(signal.reason);
      release();
    };
    signal.addEventListener('abort', listener, { once: true });
    followed.push([signal, listener]);
  }
  if (first.signal.aborted) release();
  return { signal: first.signal, release };
}
