import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger';
import { sharedGenerationFollowed, sharedGenerationLapses, sharedGenerationMoveFailures } from '../telemetry/metrics';
import { CacheClosedError } from './errors';
import type { Cache } from './port';

/**
 * A connection can stall without failing (a half-open TCP connection, a frozen proxy): messages stop arriving but
 * nothing says so until TCP gives up, minutes later. So a process sends itself a probe this often (one per cache,
 * for all its views), on a channel of its own, and stops trusting its subscription when one has not come back by the
 * deadline (a change is then seen at the next request within about `everyMs + deadlineMs` of the stall, whatever
 * the remembered values' TTL says).
 */
export const GENERATION_PROBE = { everyMs: 1_000, deadlineMs: 1_500 };

const TTL_MS = 30 * 24 * 3600 * 1000;
const RESUBSCRIBE_DELAY_MS = 1_000;

/** This process's view of one shared generation (one per cache instance: see `SharedGeneration.viewOf`). */
export interface GenerationView {
  /**
   * The generation to check and store remembered values under, now. Two calls give the same value only when no
   * change can have happened in between. Rejects when neither the subscription nor the cache can tell. `readAt`,
   * the `pollPhaseMark()` taken when the request was read, spares a request the wait for the poll phase to end when
   * one already has since (a request that checked another generation first).
   */
  current(readAt?: number): Promise<string>;
  /** A change was made (here, or by a service this process called): nothing remembered before may match again. */
  changedHere(): void;
  /**
   * Hears every announcement's message, before any `current()` asked in the same event-loop turn answers. For a
   * generation with scoped announcements, the listener forgets what the message names (the generation stays).
   */
  onAnnouncement(listener: (message: string) => void): () => void;
  /**
   * Hears the view trust its subscription again after an interruption or a stall, during which announcements may
   * have been lost: whoever pushes changes to others (list-changed notifications) can say "anything may have
   * changed". Not called when the subscription is first confirmed.
   */
  onResumed(listener: () => void): () => void;
}

export interface SharedGenerationOptions {
  /**
   * Announcements whose message names exactly what changed (the listeners forget just that) leave the view's
   * generation where it is; any other announcement moves it. Absent: every announcement moves it.
   */
  scoped?(message: string): boolean;
}

/** Every generation of this process, by name: gRPC answers say which ones a call moved (grpc/generations-moved.ts). */
const generations = new Map<string, SharedGeneration>();

/**
 * A value in the shared cache that changes whenever something others remember changes (who a credential belongs
 * to, what a gateway exposes). Processes may use what they remember only while it is unchanged, so a change takes
 * effect at the next request on every replica. Any new value is unique, so a lost or restarted cache can only cause
 * re-checks.
 *
 * Each change is also announced on a channel, so a process can follow the generation in memory (`viewOf`) instead
 * of reading it from the cache on every request.
 */
export class SharedGeneration {
  readonly key: string;
  readonly channel: string;
  /** How many times this process has moved the generation (see `changesMadeHere`). */
  private changes = 0;
  private readonly views = new WeakMap<Cache, GenerationView>();
  /** The same views, to reach them all (held weakly: a view lives as long as its cache). */
  private readonly liveViews = new Set<WeakRef<GenerationView>>();

  constructor(
    readonly name: string,
    private readonly options: SharedGenerationOptions = {},
  ) {
    if (generations.has(name)) throw new Error(`shared generation ${name} defined twice`);
    if (name.includes(',')) throw new Error('a shared generation name cannot contain a comma');
    this.key = `${name}:generation`;
    this.channel = `${name}:generation`;
    generations.set(name, this);
  }

  /** The generation by its name, if this process defines it. */
  static named(name: string): SharedGeneration | undefined {
    return generations.get(name);
  }

  static all(): Iterable<SharedGeneration> {
    return generations.values();
  }

  read(cache: Cache): Promise<string | null> {
    return cache.get(this.key);
  }

  /**
   * Stores a new value first, then announces `message` (or each of `message`, in order: one change told in several
   * messages): a process reading the key after a message sees it too.
   * This process's own view, and the count a gRPC answer reports, move on first, whatever the cache then does: the
   * answer that made the change may reach its caller, and the caller's next request reach this process (or the
   * caller itself), before the message does, or when the cache cannot be written at all.
   */
  async bump(cache: Cache, message: string | readonly string[] = ''): Promise<void> {
    this.changes += 1;
    this.views.get(cache)?.changedHere();
    await cache.set(this.key, randomUUID(), TTL_MS);
    for (const each of typeof message === 'string' ? [message] : message) await cache.publish(this.channel, each);
  }

  /**
   * After a committed change: `bump`, and when the cache cannot be written, say so (log and metric) rather than fail
   * the answer. The change is made either way and failing would only mislead its caller (a retry meets a changed
   * revision or a missing resource); this process's views and the gRPC answer have moved on regardless, and other
   * replicas see the change once what they remember expires (AUTH_CACHE_SECONDS; a gateway exposure's 30 s), or at
   * once if their own subscription is down too (they then read the cache or ask the service).
   */
  async moveAfterCommit(deps: { cache: Cache; logger: Logger }, message: string | readonly string[] = ''): Promise<void> {
    try {
      await this.bump(deps.cache, message);
    } catch (error) {
      sharedGenerationMoveFailures.inc({ generation: this.name });
      deps.logger.error({ err: error, generation: this.name }, 'a committed change could not move the shared generation; other replicas see it when what they remember expires');
    }
  }

  /**
   * How many times this process has moved the generation. A gRPC server compares it before and after a call and
   * tells the caller when it moved, so the process that carried a change learns of it with the answer instead of
   * racing the announcement; a count moved by a concurrent call only costs a re-check.
   */
  changesMadeHere(): number {
    return this.changes;
  }

  /** A service this process called moved the generation during the call: every view here moves on now. */
  changedElsewhere(): void {
    for (const ref of this.liveViews) {
      const view = ref.deref();
      if (view) view.changedHere();
      else this.liveViews.delete(ref);
    }
  }

  /**
   * The process-wide view of this generation kept by `cache`, created (and subscribed) on first use. While the
   * subscription is known to be live, the generation is a local epoch that every announced change, and every
   * interruption or resumption of the subscription, moves on, so nothing remembered under an older one can match
   * again; it costs no round trip. Otherwise (before the subscription is first confirmed, or while its connection is
   * down) every call reads the shared value from the cache.
   */
  viewOf(cache: Cache): GenerationView {
    let view = this.views.get(cache);
    if (!view) {
      view = watch(this, cache, this.options);
      this.views.set(cache, view);
      this.liveViews.add(new WeakRef(view));
    }
    return view;
  }
}

/** The promise every caller of this event-loop turn shares (see afterPollPhase). */
let nextCheckPhase: Promise<void> | undefined;
/** Check phases that ended a wait (see pollPhaseMark). */
let checkPhasesSeen = 0;

/**
 * Resolves in the check phase that follows the current poll phase. Every caller of one turn shares one Immediate:
 * under load a single poll reads many requests, and an Immediate with its promises per request was one of the three
 * Immediates a gateway call made (docs/performance.md, "what a call's bookkeeping costs").
 */
function afterPollPhase(): Promise<void> {
  return (nextCheckPhase ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      nextCheckPhase = undefined;
      checkPhasesSeen += 1;
      resolve();
    });
  }));
}

/**
 * A mark to take when a request is read and hand to `GenerationView.current`: once a wait for the poll phase has
 * ended after it, every message read in the request's poll phase has been handled, so later checks of the same
 * request need not wait again (waiting would push the rest of the request to the next turn of the event loop).
 */
export function pollPhaseMark(): number {
  return checkPhasesSeen;
}

function watch(generation: SharedGeneration, cache: Cache, options: SharedGenerationOptions): GenerationView {
  let epoch = 0;
  /** The announcements' subscription is confirmed and uninterrupted. */
  let subscribed = false;
  /** The subscriber connection delivers: the last probe came back in time (or none is overdue yet). */
  let delivering = true;
  const live = () => subscribed && delivering;
  const listeners = new Set<(message: string) => void>();
  const resumedListeners = new Set<() => void>();
  /** Trusted once already: a later confirmation is a resumption. */
  let wasLive = false;
  const moveOn = () => {
    epoch += 1;
  };
  const followed = sharedGenerationFollowed.labels(generation.name);
  followed.set(0);
  const becameLive = () => {
    if (!live()) return;
    followed.set(1);
    if (wasLive) for (const listener of resumedListeners) listener();
    wasLive = true;
  };
  const lapsed = (reason: 'interrupted' | 'stalled') => {
    followed.set(0);
    sharedGenerationLapses.inc({ generation: generation.name, reason });
  };
  const shared = async () => `shared:${String(await generation.read(cache))}`;
  const announced = (message: string) => {
    if (!options.scoped?.(message)) moveOn();
    for (const listener of listeners) listener(message);
  };

  const subscribe = () => {
    cache
      .subscribe(generation.channel, announced, {
        onLive: () => {
          // Whatever was remembered before may have missed a message: start a new epoch, then trust it.
          moveOn();
          subscribed = true;
          becameLive();
        },
        onInterrupted: () => {
          subscribed = false;
          moveOn();
          lapsed('interrupted');
        },
      })
      .catch((error: unknown) => {
        // A subscription is registered even while the cache is unreachable (live once it answers, reading the shared
        // value until then); should one be refused all the same, keep reading the shared value and try again later.
        if (error instanceof CacheClosedError) return;
        setTimeout(subscribe, RESUBSCRIBE_DELAY_MS).unref();
      });
  };
  subscribe();
  probeDelivery(cache, {
    stalled: () => {
      delivering = false;
      moveOn();
      lapsed('stalled');
    },
    delivering: () => {
      // Everything announced before this probe has been handled by now (one connection, in order): a new epoch.
      moveOn();
      delivering = true;
      becameLive();
    },
  });

  return {
    changedHere: moveOn,
    onAnnouncement(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onResumed(listener) {
      resumedListeners.add(listener);
      return () => resumedListeners.delete(listener);
    },
    async current(readAt?: number): Promise<string> {
      if (!live()) return shared();
      // An HTTP request and the message announcing a change can become readable in the same poll of the event
      // loop, and the request's callback may run first. Deciding after the poll phase (setImmediate runs in the
      // check phase that follows it) means every message that had arrived by the time the request was read has
      // been handled, so a change announced before the request was sent is never missed.
      if (readAt === undefined || checkPhasesSeen <= readAt) await afterPollPhase();
      return live() ? `local:${epoch}` : shared();
    },
  };
}

interface DeliveryWatcher {
  stalled(): void;
  delivering(): void;
}

/** One probe per cache: every view of it listens on the same subscriber connection, so one probe speaks for all. */
const probes = new WeakMap<Cache, { watchers: Set<DeliveryWatcher>; isStalled(): boolean }>();

/**
 * Tells `watcher` when the cache's subscriber connection stops delivering (`stalled`: a probe is overdue) and when it
 * delivers again (`delivering`: a probe came back after that). Starts the cache's probe on first use.
 */
function probeDelivery(cache: Cache, watcher: DeliveryWatcher): void {
  let probe = probes.get(cache);
  if (!probe) {
    probe = startProbe(cache);
    probes.set(cache, probe);
  }
  probe.watchers.add(watcher);
  if (probe.isStalled()) watcher.stalled();
}

/**
 * Sends a probe every GENERATION_PROBE.everyMs on a channel only this process listens to, and tells the watchers when
 * one is overdue and when one comes back after that. Stops when the cache closes.
 */
function startProbe(cache: Cache): { watchers: Set<DeliveryWatcher>; isStalled(): boolean } {
  const watchers = new Set<DeliveryWatcher>();
  const channel = `generations:probe:${randomUUID()}`;
  let stalled = false;
  let awaited: { probe: string; overdue: NodeJS.Timeout } | undefined;
  let sent = 0;
  const heard = (probe: string) => {
    if (probe !== awaited?.probe) return; // an older probe, delivered late
    clearTimeout(awaited.overdue);
    awaited = undefined;
    if (stalled) {
      stalled = false;
      for (const watcher of watchers) watcher.delivering();
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
        for (const watcher of watchers) watcher.stalled();
      }
    }, GENERATION_PROBE.deadlineMs).unref();
    awaited = { probe, overdue };
    cache.publish(channel, probe).catch((error: unknown) => {
      if (error instanceof CacheClosedError) stop();
      // Otherwise the cache is unreachable: the probe stays unanswered and its deadline says so.
    });
  };
  const timer = setInterval(send, GENERATION_PROBE.everyMs).unref();
  const stop = () => {
    clearInterval(timer);
    if (awaited) clearTimeout(awaited.overdue);
  };
  // Until the probe channel is subscribed no probe comes back, so the views read the shared value: safe, and retried.
  const listen = () => {
    cache.subscribe(channel, heard).catch((error: unknown) => {
      if (error instanceof CacheClosedError) stop();
      else setTimeout(listen, RESUBSCRIBE_DELAY_MS).unref();
    });
  };
  listen();
  return { watchers, isStalled: () => stalled };
}
