/**
 * How many discoveries one catalog process runs at once: a discovery may hold what parsing up to 16 MiB of an
 * upstream's answers builds (about 500 MB for the worst shape, docs/catalog.md, Discovery bounds), so unbounded
 * concurrency let one team admin refreshing many servers that point at a hostile upstream exhaust the process's
 * heap. At most MAX_RUNNING run, at most MAX_PER_TEAM of one team's servers among them (so that one team's slow
 * upstreams never hold every slot); the others wait in order of arrival.
 */
export const MAX_DISCOVERIES_RUNNING = 4;
export const MAX_DISCOVERIES_PER_TEAM = 1;

interface Waiter {
  teamId: string;
  start: () => void;
}

/** Raised when a discovery's signal ends its wait for a slot: nothing was asked of the upstream. */
export class DiscoverySlotWaitEnded extends Error {
  constructor() {
    super('stopped while waiting for a discovery slot');
    this.name = 'DiscoverySlotWaitEnded';
  }
}

export class DiscoverySlots {
  private running = 0;
  private readonly runningByTeam = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly maxRunning = MAX_DISCOVERIES_RUNNING,
    private readonly maxPerTeam = MAX_DISCOVERIES_PER_TEAM,
  ) {}

  /** Runs `discover` once a slot is free for the team; `signal` ends the wait (DiscoverySlotWaitEnded), not the run. */
  async run<T>(teamId: string, signal: AbortSignal, discover: () => Promise<T>): Promise<T> {
    await this.acquire(teamId, signal);
    try {
      return await discover();
    } finally {
      this.release(teamId);
    }
  }

  private startable(teamId: string): boolean {
    return this.running < this.maxRunning && (this.runningByTeam.get(teamId) ?? 0) < this.maxPerTeam;
  }

  private take(teamId: string): void {
    this.running += 1;
    this.runningByTeam.set(teamId, (this.runningByTeam.get(teamId) ?? 0) + 1);
  }

  private acquire(teamId: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new DiscoverySlotWaitEnded());
    // Only when nobody of the team waits before it: arrivals are served in order.
    if (this.startable(teamId) && !this.waiting.some((waiter) => waiter.teamId === teamId)) {
      this.take(teamId);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        teamId,
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new DiscoverySlotWaitEnded());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(teamId: string): void {
    this.running -= 1;
    const left = (this.runningByTeam.get(teamId) ?? 1) - 1;
    if (left > 0) this.runningByTeam.set(teamId, left);
    else this.runningByTeam.delete(teamId);
    // The earliest waiters whose team has room, as long as slots are free.
    for (let index = 0; index < this.waiting.length && this.running < this.maxRunning; ) {
      const waiter = this.waiting[index]!;
      if (!this.startable(waiter.teamId)) {
        index += 1;
        continue;
      }
      this.waiting.splice(index, 1);
      this.take(waiter.teamId);
      waiter.start();
    }
  }
}
