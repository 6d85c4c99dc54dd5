import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DatabaseUnavailableError, type Logger, type Queryable } from '@platform/runtime';
import { finishRefreshRound, releaseRefreshLease, renewRefreshLease, takeRefreshLease } from '../store/refresh-store';

/**
 * How long a refresh lease lasts unless its holder renews it (a third of it at a time while it discovers): the
 * longest that a holder which is gone (a crashed replica, or one cut off from the database) keeps other replicas'
 * refreshes of the server merged into a refresh that no longer runs. Its own replica takes over at once.
 */
export const REFRESH_LEASE_SECONDS = 30;

/** How often a refresh that could not let go of its lease (the database did not answer) tries again. */
const RELEASE_RETRY_MS = 1_000;

/**
 * A discovery stopped because its lease could not be renewed before running out (the database did not answer):
 * another replica may take the server over, and two discoveries of one server never run at once. The catalog's
 * database is what failed, so it is that failure (the scheduler treats it as an outage, not the upstream's).
 */
export class RefreshLeaseLost extends DatabaseUnavailableError {
  constructor(cause: unknown) {
    super(cause);
    this.name = 'RefreshLeaseLost';
  }
}

/**
 * A discovery stopped because another refresh holds its lease now (it took the lease over once it had run out
 * unrenewed, as when this process or its statements stalled): nothing is down, and that refresh discovers the server.
 * Not an outage, so not a DatabaseUnavailableError: refreshMcpServer answers its caller as one merged into a running
 * refresh.
 */
export class RefreshLeaseTakenOver extends Error {
  constructor() {
    super('another refresh took the refresh lease over');
    this.name = 'RefreshLeaseTakenOver';
  }
}

/**
 * The refresh leases of one catalog replica (docs/catalog.md, One discovery of a server at a time): which servers this
 * replica is refreshing now, at most one refresh each. A refresh asked for while one of the server runs here is
 * merged into it in memory; otherwise it takes the lease in the database, where a lease of this replica is one
 * that no longer runs (a refresh that failed before it could let go), taken over at once.
 */
export class RefreshLeases {
  /** This replica in the leases it holds (`refresh_lease_replica`). */
  readonly replicaId = randomUUID();
  private readonly running = new Map<string, RefreshLease>();

  constructor(readonly leaseSeconds = REFRESH_LEASE_SECONDS) {}

  /**
   * Makes the caller this replica's refresh of the server, or answers null when one already runs here, which is then
   * asked to discover once more. Synchronous, so two callers in one replica never both go on to take the lease.
   */
  enter(serverId: string): RefreshLease | null {
    const current = this.running.get(serverId);
    if (current) {
      current.ask();
      return null;
    }
    const lease: RefreshLease = new RefreshLease(this, serverId, () => {
      if (this.running.get(serverId) === lease) this.running.delete(serverId);
    });
    this.running.set(serverId, lease);
    return lease;
  }
}

/**
 * A lease renewed while a round runs: `signal` aborts before it could run out (RefreshLeaseLost), or when another
 * refresh holds it (RefreshLeaseTakenOver).
 */
export interface KeptLease {
  signal: AbortSignal;
  stop(): void;
}

/** One refresh of a server in this replica, and the lease in the database it takes, keeps and lets go. */
export class RefreshLease {
  readonly token = randomUUID();
  /** Another refresh of the server was asked for in this replica since the last round ended. */
  private asked = false;
  /** When (performance.now()) the last statement that set the lease was sent: it lasts a term from at least then. */
  private setAt = 0;

  constructor(
    private readonly leases: RefreshLeases,
    readonly serverId: string,
    /** Ends this refresh's place in the replica: a later refresh of the server then takes the lease anew. */
    readonly leave: () => void,
  ) {}

  ask(): void {
    this.asked = true;
  }

  private takeAsked(): boolean {
    const asked = this.asked;
    this.asked = false;
    return asked;
  }

  private get termMs(): number {
    return this.leases.leaseSeconds * 1000;
  }

  /** Takes the lease when it is free; false when another live refresh holds it (it is then asked to discover once more). */
  async take(db: Queryable): Promise<boolean> {
    const sent = performance.now();
    const taken = await takeRefreshLease(db, this.serverId, this.leases.replicaId, this.token, this.leases.leaseSeconds);
    if (taken) this.setAt = sent;
    return taken;
  }

  /**
   * Renews the lease every third of its term while a round runs. When it was not renewed for five sixths of the term
   * (the database does not answer: RefreshLeaseLost) or another refresh holds it (RefreshLeaseTakenOver), `signal`
   * aborts: the round stops discovering before the lease runs out and another replica may start one.
   */
  keep(db: Queryable): KeptLease {
    const lost = new AbortController();
    let stopped = false;
    let renewing = false;
    let lastError: unknown = new Error('the refresh lease could not be renewed in time');
    let giveUp: NodeJS.Timeout | undefined;
    const armGiveUp = () => {
      clearTimeout(giveUp);
      giveUp = setTimeout(() => lost.abort(new RefreshLeaseLost(lastError)), this.setAt + (this.termMs * 5) / 6 - performance.now());
    };
    const renew = async () => {
      const sent = performance.now();
      try {
        if (!(await renewRefreshLease(db, this.serverId, this.token, this.leases.leaseSeconds))) {
          lost.abort(new RefreshLeaseTakenOver());
          return;
        }
        this.setAt = sent;
        if (!stopped) armGiveUp();
      } catch (error) {
        lastError = error;
      }
    };
    armGiveUp();
    const beat = setInterval(() => {
      if (renewing || lost.signal.aborted) return;
      renewing = true;
      void renew().finally(() => (renewing = false));
    }, this.termMs / 3);
    return {
      signal: lost.signal,
      stop() {
        stopped = true;
        clearInterval(beat);
        clearTimeout(giveUp);
      },
    };
  }

  /**
   * Ends a round (store: finishRefreshRound), counting a refresh asked for in this replica meanwhile. True: discover
   * again under the lease. One asked for while the lease was being let go takes it again (or, when another replica
   * took it meanwhile, asks that one to discover once more): its caller was told the running refresh would.
   */
  async finishRound(db: Queryable, mayRepeat: boolean, mustRepeat: boolean): Promise<boolean> {
    const sent = performance.now();
    if (await finishRefreshRound(db, this.serverId, this.token, this.leases.leaseSeconds, mayRepeat, mustRepeat || this.takeAsked())) {
      this.setAt = sent;
      return true;
    }
    return mayRepeat && this.takeAsked() && (await this.take(db));
  }

  /**
   * Lets go of the lease after a failed refresh. When the database does not answer, tries again every second in the
   * background until it does (other replicas then refresh at once) or the lease has run out anyway.
   */
  async release(db: Queryable, logger: Logger): Promise<void> {
    try {
      await releaseRefreshLease(db, this.serverId, this.token);
    } catch (error) {
      logger.warn({ serverId: this.serverId, err: (error as Error).message }, 'releasing the refresh lease failed; trying again until the database answers');
      this.releaseLater(db);
    }
  }

  private releaseLater(db: Queryable): void {
    const retry = setTimeout(() => {
      if (performance.now() >= this.setAt + this.termMs) return;
      releaseRefreshLease(db, this.serverId, this.token).catch(() => this.releaseLater(db));
    }, RELEASE_RETRY_MS);
    // Never what keeps a stopping process alive: the lease runs out on its own.
    retry.unref();
  }
}
