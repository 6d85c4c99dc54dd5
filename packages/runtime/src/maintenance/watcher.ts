import type { Cache } from '../cache/port';
import type { Logger } from '../logging';
import { MAINTENANCE_CHANNEL, MAINTENANCE_OFF, maintenanceError, toMaintenanceStatus, type MaintenanceStatus } from './status';

export interface MaintenanceWatcherOptions {
  /** The shared cache whose `maintenance` channel carries change signals. */
  cache: Cache;
  /** Reads the current setting from its owner (the identity service's GetMaintenance). */
  fetch(): Promise<unknown>;
  /** How often to re-read the setting, in case a signal was lost (signals are best effort). */
  refreshMs: number;
  logger: Logger;
}

export interface MaintenanceWatcher {
  /** Subscribes to change signals, reads the setting once and starts the periodic re-read. */
  start(): Promise<void>;
  stop(): Promise<void>;
  isOn(): boolean;
  current(): MaintenanceStatus;
  /** The whole setting as its owner last described it (the GetMaintenance answer or the signal), once known. */
  snapshot(): unknown;
  /**
   * Takes a setting this process just received from its owner (the SetMaintenance answer), so the process that carried
   * a change sees it at once rather than when its own signal comes back; an older revision is ignored as always.
   */
  learn(setting: unknown): void;
  /** Calls `listener` after every change this process learns of; returns a function that removes it. */
  onChange(listener: (status: MaintenanceStatus) => void): () => void;
  /** Throws the 503 `maintenance` error when maintenance is on and `work` must pause. */
  assertAvailable(work: string): void;
  /**
   * Resolves as soon as maintenance is off (at once when it already is): parked work awaits this and resumes
   * by itself when an admin ends maintenance. Rejects with `signal.reason` when `signal` aborts first.
   */
  whenAvailable(signal?: AbortSignal): Promise<void>;
}

/**
 * One per process: knows whether maintenance mode is on. A change reaches it through the cache signal within
 * moments, or through the periodic re-read within `refreshMs` when the signal is lost. Until the first read
 * succeeds the platform is assumed to be available.
 */
export function createMaintenanceWatcher(options: MaintenanceWatcherOptions): MaintenanceWatcher {
  const { cache, logger } = options;
  let status: MaintenanceStatus = MAINTENANCE_OFF;
  let latest: unknown;
  const listeners = new Set<(status: MaintenanceStatus) => void>();
  let unsubscribe: (() => Promise<void>) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** `subscribe` has resolved: the first read follows it, so a confirmation from then on needs a read of its own. */
  let subscribed = false;

  /** Takes a newer status; an older revision (a late signal, a slow read) never overwrites a newer one. */
  const accept = (next: MaintenanceStatus, whole: unknown): void => {
    if (next.revision < status.revision) return;
    latest = whole;
    const changed = next.enabled !== status.enabled || next.reason !== status.reason || next.plannedEndAt !== status.plannedEndAt;
    status = next;
    if (!changed) return;
    logger.info({ maintenance: next.enabled, revision: next.revision }, next.enabled ? 'maintenance mode on' : 'maintenance mode off');
    for (const listener of [...listeners]) {
      try {
        listener(next);
      } catch (error) {
        logger.error({ err: error }, 'maintenance listener failed');
      }
    }
  };

  /** Takes the owner's description of the setting; says so (never its content) when it has another shape. */
  const take = (whole: unknown, what: string): void => {
    const next = toMaintenanceStatus(whole);
    if (next) accept(next, whole);
    else logger.warn(`${what} in an unexpected shape ignored`);
  };

  const refresh = async (): Promise<void> => {
    try {
      take(await options.fetch(), 'maintenance setting read back');
    } catch (error) {
      // Keep the last known status; the next re-read tries again.
      logger.warn({ err: error }, 'could not read the maintenance setting');
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void refresh().finally(schedule);
    }, options.refreshMs);
    timer.unref();
  };

  const watcher: MaintenanceWatcher = {
    async start() {
      stopped = false;
      try {
        unsubscribe = await cache.subscribe(
          MAINTENANCE_CHANNEL,
          (message) => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(message);
            } catch {
              parsed = undefined;
            }
            take(parsed, 'maintenance signal');
          },
          {
            // Signals sent before the subscription was live (a process started while Redis was away, or one whose
            // connection failed) are lost: read the setting now rather than at the next re-read.
            onLive: () => {
              if (subscribed && !stopped) void refresh();
            },
          },
        );
        subscribed = true;
      } catch (error) {
        // Without signals the re-read still delivers changes, only later.
        logger.warn({ err: error }, 'could not subscribe to maintenance signals');
      }
      await refresh();
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const ending = unsubscribe;
      unsubscribe = undefined;
      if (ending) await ending();
    },
    isOn: () => status.enabled,
    current: () => status,
    snapshot: () => latest,
    learn: (setting) => take(setting, 'maintenance setting learnt'),
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    assertAvailable(work) {
      if (status.enabled) throw maintenanceError(status, work);
    },
    whenAvailable(signal) {
      if (!status.enabled) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const done = (): void => {
          remove();
          signal?.removeEventListener('abort', aborted);
        };
        const remove = watcher.onChange((next) => {
          if (next.enabled) return;
          done();
          resolve();
        });
        const aborted = (): void => {
          done();
          reject(signal?.reason);
        };
        if (signal?.aborted) aborted();
        else signal?.addEventListener('abort', aborted, { once: true });
      });
    },
  };
  return watcher;
}
