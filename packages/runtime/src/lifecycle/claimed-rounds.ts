import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseUnavailableError } from '../db/errors';
import type { Logger } from '../logging';
import { LogThrottle } from '../logging/log-throttle';
import type { BackgroundTask } from '../service/define';

export interface ClaimedRoundsOptions<T> {
  name: string;
  logger: Logger;
  /** How often a round starts (each round takes everything due at that time). */
  pollMs: number;
  /** How many items are worked on at once. */
  concurrency: number;
  /** Claims one due item (moving it forward so no other worker or replica takes it this round); null when none is due. */
  claim(): Promise<T | null>;
  /** Works on one claimed item; `signal` aborts it on shutdown. Failures are logged, never fatal. */
  work(item: T, signal: AbortSignal): Promise<void>;
}

export interface ClaimedRoundsTask extends BackgroundTask {
  /** Runs one round now: workers claim and work until nothing is due. Resolves with how many items were worked on. */
  runRound(): Promise<number>;
}

/** How often, at most, one task logs that its database is unavailable (it meets the outage at every round and item). */
const OUTAGE_LOG_INTERVAL_MS = 60_000;

/**
 * A background task that, every `pollMs`, works through what is due with at most `concurrency` workers, each
 * claiming one item at a time (so replicas share the load). `stop` aborts in-flight work and waits for the loop.
 */
export function claimedRounds<T>(options: ClaimedRoundsOptions<T>): ClaimedRoundsTask {
  const { logger, name } = options;
  let stopping = new AbortController();
  let loop: Promise<void> | null = null;
  const outages = new LogThrottle(OUTAGE_LOG_INTERVAL_MS);

  /** A failure, logged; a database outage at most once a minute per task, with the count held back. */
  function report(error: unknown, message: string): void {
    const err = (error as Error).message;
    if (!(error instanceof DatabaseUnavailableError)) return logger.warn({ task: name, err }, message);
    outages.warn(logger, { task: name, err }, `${message}: the database is unavailable; trying again next round`);
  }

  async function worker(signal: AbortSignal): Promise<number> {
    let done = 0;
    while (!signal.aborted) {
      const item = await options.claim();
      if (item === null) break;
      try {
        await options.work(item, signal);
      } catch (error) {
        if (!signal.aborted) report(error, 'background work failed');
      }
      done++;
    }
    return done;
  }

  async function runRound(): Promise<number> {
    const signal = stopping.signal;
    // Every worker finishes before the round does (a failed claim must not let a round overlap the next).
    const results = await Promise.allSettled(Array.from({ length: options.concurrency }, () => worker(signal)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    return results.reduce((sum, result) => sum + (result.status === 'fulfilled' ? result.value : 0), 0);
  }

  async function run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await runRound();
      } catch (error) {
        // The database may be briefly unreachable: try again next round.
        if (!signal.aborted) report(error, 'background round failed');
      }
      await sleep(options.pollMs, undefined, { signal }).catch(() => undefined);
    }
  }

  return {
    name,
    runRound,
    start() {
      if (loop) return;
      stopping = new AbortController();
      loop = run(stopping.signal);
    },
    async stop() {
      stopping.abort();
      await loop;
      loop = null;
    },
  };
}

export interface ChunkedDeletionOptions {
  name: string;
  logger: Logger;
  pollMs: number;
  /** Deletes at most one chunk of what is due (one short statement) and says how many rows it deleted. */
  deleteChunk(): Promise<number>;
}

/**
 * Retention and pruning as a background task: every `pollMs`, chunks are deleted until none is left (a round's
 * "claim" is one chunk, deleted as it is claimed). Replicas running at the same time each take their own chunks.
 */
export function chunkedDeletion(options: ChunkedDeletionOptions): ClaimedRoundsTask {
  return claimedRounds({
    name: options.name,
    logger: options.logger,
    pollMs: options.pollMs,
    concurrency: 1,
    claim: async () => {
      const deleted = await options.deleteChunk();
      return deleted > 0 ? deleted : null;
    },
    work: async () => undefined,
  });
}
