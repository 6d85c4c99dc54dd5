import { randomUUID } from 'node:crypto';
import { CacheClosedError } from './errors';
import type { Cache } from './port';

/**
 * A value that changes whenever anything that decides authentication changes (a key revoked, a person
 * suspended, a membership removed, a service account disabled, a session ended). Edges may cache who a
 * credential belongs to only while this value is unchanged, so such a change takes effect at the next request
 * on every replica. Any new value is unique, so a lost or restarted cache can only cause re-checks.
 *
 * Each change is also announced on a channel, so a process can follow the generation in memory
 * (`authGenerationOf`) instead of reading it from the cache on every request.
 */
const KEY = 'auth:generation';
const CHANNEL = 'auth:generation';
const TTL_MS = 30 * 24 * 3600 * 1000;
const RESUBSCRIBE_DELAY_MS = 1_000;
/**
 * A connection can stall without failing (a half-open TCP connection, a frozen proxy): messages stop arriving but
 * nothing says so until TCP gives up, minutes later. So the view sends itself a probe this often, on a channel of
 * its own, and stops trusting its subscription when one has not come back by the deadline (a change is then seen at
 * the next request within about PROBE_EVERY_MS + PROBE_DEADLINE_MS of the stall, whatever AUTH_CACHE_SECONDS says).
 */
export const AUTH_GENERATION_PROBE = { everyMs: 1_000, deadlineMs: 1_500 };

export function readAuthGeneration(cache: Cache): Promise<string | null> {
  return cache.get(KEY);
}

/** How many times this process has moved the generation (see `authChangesMadeHere`). */
let changesMadeHere = 0;

/**
 * Stores the new value first, then announces it: a process reading the key after the message sees it too. This
 * process's own view moves on at once, before the announcement comes back: the answer that made the change may
 * reach its caller, and the caller's next request reach this process, before the message does.
 */
export async function bumpAuthGeneration(cache: Cache): Promise<void> {
  const generation = randomUUID();
  await cache.set(KEY, generation, TTL_MS);
  changesMadeHere += 1;
  views.get(cache)?.changedHere();
  await cache.publish(CHANNEL, generation);
}

/**
 * How many times this process has moved the generation. A gRPC server compares it before and after a call and
 * tells the caller when it moved (grpc/auth-changed.ts), so the process that carried a change learns of it with
 * the answer instead of racing the announcement; a count moved by a concurrent call only costs a re-check.
 */
export function authChangesMadeHere(): number {
  return changesMadeHere;
}

/**
 * A service this process called says the generation moved during the call: every view in this process moves on
 * now, as if the announcement had arrived.
 */
export function authChangedElsewhere(): void {
  for (const ref of liveViews) {
    const view = ref.deref();
    if (view) view.changedHere();
    else liveViews.delete(ref);
  }
}

/** This process's view of the auth generation (one per cache instance: see `authGenerationOf`). */
export interface AuthGeneration {
  /**
   * The generation to check and store remembered answers under, now. Two calls give the same value only when
   * no change can have happened in between. Rejects when neither the subscription nor the cache can tell.
   */
  current(): Promise<string | null>;
  /** This process changed the generation (`bumpAuthGeneration`): nothing remembered before may match again. */
  changedHere(): void;
}

const views = new WeakMap<Cache, AuthGeneration>();
/** The same views, to reach them all (held weakly: a view lives as long as its cache). */
const liveViews = new Set<WeakRef<AuthGeneration>>();

/**
 * The process-wide view of the auth generation kept by `cache`, created (and subscribed) on first use. While the
 * subscription is known to be live, the generation is a local epoch that every announced change, and every
 * interruption or resumption of the subscription, moves on, so no older remembered answer can match again; it
 * costs no round trip. Otherwise (before the subscription is first confirmed, or while its connection is down)
 * every call reads the shared value from the cache, as before there was a subscription.
 */
export function authGenerationOf(cache: Cache): AuthGeneration {
  let view = views.get(cache);
  if (!view) {
    view = watchAuthGeneration(cache);
    views.set(cache, view);
    liveViews.add(new WeakRef(view));
  }
  return view;
}

/** The promise every caller of this event-loop turn shares (see afterPollPhase). */
let nextCheckPhase: Promise<void> | undefined;

/**
 * Resolves in the check phase that follows the current poll phase. Every caller of one turn shares one Immediate:
 * under load a single poll reads many requests, and an Immediate with its promises per request was one of the three
 * Immediates a gateway call made (docs/performance.md, "what a call's bookkeeping costs").
 */
function afterPollPhase(): Promise<void> {
  return (nextCheckPhase ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      nextCheckPhase = undefined;
      resolve();
    });
  }));
}

function watchAuthGeneration(cache: Cache): AuthGeneration {
  let epoch = 0;
  /** The announcements' subscription is confirmed and uninterrupted. */
  let subscribed = false;
  /** The subscriber connection delivers: the last probe came back in time (or none is overdue yet). */
  let delivering = true;
  const live = () => subscribed && delivering;
  const moveOn = () => {
    epoch += 1;
  };

  const subscribe = () => {
    cache
      .subscribe(CHANNEL, moveOn, {
        onLive: () => {
          // Whatever was remembered before may have missed a message: start a new epoch, then trust it.
          moveOn();
          subscribed = true;
        },
        onInterrupted: () => {
          subscribed = false;
          moveOn();
        },
      })
      .catch((error: unknown) => {
        // Not subscribed (the cache unreachable at start): keep reading the shared value and try again later.
        if (error instanceof CacheClosedError) return;
        setTimeout(subscribe, RESUBSCRIBE_DELAY_MS).unref();
      });
  };
  subscribe();
  probeDelivery(cache, {
    stalled: () => {
      delivering = false;
      moveOn();
    },
    delivering: () => {
      // Everything announced before this probe has been handled by now (one connection, in order): a new epoch.
      moveOn();
      delivering = true;
    },
  });

  return {
    changedHere: moveOn,
    async current(): Promise<string | null> {
      if (!live()) return `shared:${String(await readAuthGeneration(cache))}`;
      // An HTTP request and the message announcing a change can become readable in the same poll of the event
      // loop, and the request's callback may run first. Deciding after the poll phase (setImmediate runs in the
      // check phase that follows it) means every message that had arrived by the time the request was read has
      // been handled, so a change announced before the request was sent is never missed.
      await afterPollPhase();
      return live() ? `local:${epoch}` : `shared:${String(await readAuthGeneration(cache))}`;
    },
  };
}

/**
 * Sends a probe every AUTH_GENERATION_PROBE.everyMs on a channel only this process listens to, and says when one is
 * overdue (`stalled`) and when one comes back after that (`delivering`). Stops when the cache closes.
 */
function probeDelivery(cache: Cache, on: { stalled(): void; delivering(): void }): void {
  const channel = `auth:probe:${randomUUID()}`;
  let stalled = false;
  let awaited: { probe: string; overdue: NodeJS.Timeout } | undefined;
  let sent = 0;
  const heard = (probe: string) => {
    if (probe !== awaited?.probe) return; // an older probe, delivered late
    clearTimeout(awaited.overdue);
    awaited = undefined;
    if (stalled) {
      stalled = false;
      on.delivering();
    }
  };
  const send = () => {
    if (awaited) return; // the one in flight is not overdue yet
    const probe = String((sent += 1));
    const overdue = setTimeout(() => {
      if (awaited?.probe !== probe) return;
      awaited = undefined;
      if (!stalled) {
        stalled = true;
        on.stalled();
      }
    }, AUTH_GENERATION_PROBE.deadlineMs).unref();
    awaited = { probe, overdue };
    cache.publish(channel, probe).catch((error: unknown) => {
      if (error instanceof CacheClosedError) stop();
      // Otherwise the cache is unreachable: the probe stays unanswered and its deadline says so.
    });
  };
  const timer = setInterval(send, AUTH_GENERATION_PROBE.everyMs).unref();
  const stop = () => {
    clearInterval(timer);
    if (awaited) clearTimeout(awaited.overdue);
  };
  // Until the probe channel is subscribed no probe comes back, so the view reads the shared value: safe, and retried.
  const listen = () => {
    cache.subscribe(channel, heard).catch((error: unknown) => {
      if (error instanceof CacheClosedError) stop();
      else setTimeout(listen, RESUBSCRIBE_DELAY_MS).unref();
    });
  };
  listen();
}
