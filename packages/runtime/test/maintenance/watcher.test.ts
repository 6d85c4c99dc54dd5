import { AppError, createLogger, createMemoryCache, createMaintenanceWatcher, MAINTENANCE_CHANNEL, type MaintenanceWatcher } from '../../src';

const logger = createLogger({ level: 'silent' });

/** Polls `check` until it holds (or fails the test after `timeoutMs`); never asserts exact timing. */
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The setting as its owner holds it; `fetch` reads it the way the identity service's GetMaintenance answers. */
function source() {
  let setting = { enabled: false, reason: '', revision: '1' } as { enabled: boolean; reason: string; plannedEndAt?: string; revision: string };
  return {
    fetch: async () => setting,
    set(next: Partial<typeof setting>) {
      setting = { ...setting, ...next, revision: String(Number(setting.revision) + 1) };
      return setting;
    },
  };
}

describe('maintenance watcher', () => {
  const watchers: MaintenanceWatcher[] = [];
  afterEach(async () => {
    for (const watcher of watchers.splice(0)) await watcher.stop();
  });

  it('learns a change from the cache signal without waiting for a re-read', async () => {
    const cache = createMemoryCache({ keyPrefix: 't:', logger });
    const owner = source();
    const watcher = createMaintenanceWatcher({ cache, fetch: owner.fetch, refreshMs: 3_600_000, logger });
    watchers.push(watcher);
    await watcher.start();
    expect(watcher.isOn()).toBe(false);

    const seen: boolean[] = [];
    watcher.onChange((status) => seen.push(status.enabled));
    await cache.publish(MAINTENANCE_CHANNEL, JSON.stringify(owner.set({ enabled: true, reason: 'database upgrade' })));
    await eventually(() => watcher.isOn());
    expect(watcher.current()).toMatchObject({ enabled: true, reason: 'database upgrade', revision: 2 });
    expect(seen).toEqual([true]);
  });

  it('catches up through the periodic re-read when the signal is lost', async () => {
    const owner = source();
    const watcher = createMaintenanceWatcher({
      cache: createMemoryCache({ keyPrefix: 't:', logger }),
      fetch: owner.fetch,
      refreshMs: 50,
      logger,
    });
    watchers.push(watcher);
    await watcher.start();
    owner.set({ enabled: true, reason: 'moving racks' }); // no signal sent
    await eventually(() => watcher.isOn());
    expect(watcher.current().reason).toBe('moving racks');
  });

  it('takes a change its own process just wrote at once (no signal, no re-read), never an older one', async () => {
    const owner = source();
    const watcher = createMaintenanceWatcher({ cache: createMemoryCache({ keyPrefix: 't:', logger }), fetch: owner.fetch, refreshMs: 3_600_000, logger });
    watchers.push(watcher);
    await watcher.start();
    const written = owner.set({ enabled: true, reason: 'database upgrade' });
    watcher.learn(written);
    expect(watcher.isOn()).toBe(true);
    expect(watcher.snapshot()).toEqual(written);
    watcher.learn({ enabled: false, reason: '', revision: '1' });
    watcher.learn('not a setting');
    expect(watcher.current()).toMatchObject({ enabled: true, reason: 'database upgrade', revision: 2 });
  });

  it('ignores a signal older than what it already knows', async () => {
    const cache = createMemoryCache({ keyPrefix: 't:', logger });
    const owner = source();
    owner.set({ enabled: true, reason: 'newer' });
    const watcher = createMaintenanceWatcher({ cache, fetch: owner.fetch, refreshMs: 3_600_000, logger });
    watchers.push(watcher);
    await watcher.start();
    await cache.publish(MAINTENANCE_CHANNEL, JSON.stringify({ enabled: false, reason: '', revision: '1' }));
    await cache.publish(MAINTENANCE_CHANNEL, 'not json');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(watcher.current()).toMatchObject({ enabled: true, reason: 'newer', revision: 2 });
  });

  it('refuses paused work with 503 maintenance while on, and parked work resumes by itself when it ends', async () => {
    const cache = createMemoryCache({ keyPrefix: 't:', logger });
    const owner = source();
    owner.set({ enabled: true, reason: 'database upgrade' });
    const watcher = createMaintenanceWatcher({ cache, fetch: owner.fetch, refreshMs: 3_600_000, logger });
    watchers.push(watcher);
    await watcher.start();

    let refused: unknown;
    try {
      watcher.assertAvailable('new ingestion');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    const error = refused as AppError;
    expect(error.code).toBe('maintenance');
    expect(error.httpStatus).toBe(503);
    expect(error.message).toBe('Maintenance in progress: database upgrade; new ingestion is paused');
    expect(error.headers).toEqual({ 'Retry-After': '60' });

    let resumed = false;
    const parked = watcher.whenAvailable().then(() => {
      resumed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(resumed).toBe(false);

    await cache.publish(MAINTENANCE_CHANNEL, JSON.stringify(owner.set({ enabled: false, reason: '' })));
    await parked;
    expect(resumed).toBe(true);
    expect(() => watcher.assertAvailable('new ingestion')).not.toThrow();
  });

  it('lets parked work give up when its signal aborts', async () => {
    const owner = source();
    owner.set({ enabled: true, reason: 'upgrade' });
    const watcher = createMaintenanceWatcher({ cache: createMemoryCache({ keyPrefix: 't:', logger }), fetch: owner.fetch, refreshMs: 3_600_000, logger });
    watchers.push(watcher);
    await watcher.start();
    const controller = new AbortController();
    const parked = watcher.whenAvailable(controller.signal);
    controller.abort(new Error('shutting down'));
    await expect(parked).rejects.toThrow('shutting down');
  });

  it('keeps the last known state when the owner cannot be read', async () => {
    let calls = 0;
    const watcher = createMaintenanceWatcher({
      cache: createMemoryCache({ keyPrefix: 't:', logger }),
      fetch: async () => {
        calls += 1;
        if (calls === 1) return { enabled: true, reason: 'upgrade', revision: '2' };
        throw new Error('identity unavailable');
      },
      refreshMs: 20,
      logger,
    });
    watchers.push(watcher);
    await watcher.start();
    await eventually(() => calls >= 3);
    expect(watcher.isOn()).toBe(true);
  });
});
