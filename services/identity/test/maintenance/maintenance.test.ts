import {
  createCache,
  createLogger,
  createMemoryCache,
  createMaintenanceWatcher,
  type MaintenanceWatcher,
  type ServiceClients,
} from '@platform/runtime';
import { ApiClient, eventually, grpcClients, startTestPlatform, TEST_ADMIN, type TestPlatform } from '@platform/test';

const logger = createLogger({ level: 'silent' });

const etagOf = (response: { headers: Headers }): string => response.headers.get('etag') ?? '';

describe('maintenance mode', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let clients: ServiceClients;
  const watchers: MaintenanceWatcher[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = new ApiClient(platform);
    expect((await admin.signIn(TEST_ADMIN.email, TEST_ADMIN.password)).status).toBe(200);
    clients = grpcClients(platform, { deadlineMs: 5000, logger });
  });

  afterAll(async () => {
    for (const watcher of watchers) await watcher.stop();
    await clients?.close();
    await platform?.stop();
  });

  /** A process's watcher, reading the setting from identity over gRPC like every process does. */
  async function watcher(cache: Parameters<typeof createMaintenanceWatcher>[0]['cache'], refreshMs: number): Promise<MaintenanceWatcher> {
    const created = createMaintenanceWatcher({ cache, fetch: () => clients.identity.getMaintenance({}), refreshMs, logger });
    watchers.push(created);
    await created.start();
    return created;
  }

  async function put(body: unknown): Promise<Awaited<ReturnType<ApiClient['put']>>> {
    const current = await admin.get('/v1/admin/settings/maintenance');
    return admin.put('/v1/admin/settings/maintenance', body, { 'if-match': etagOf(current) });
  }

  it('starts off, readable by anyone signed in, with an ETag for the change', async () => {
    const response = await admin.get('/v1/maintenance');
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ enabled: false, reason: '', plannedEndAt: null, startedAt: null, startedBy: null });
    expect(etagOf(response)).toBe(`"${response.body.data.revision}"`);
    const anonymous = await new ApiClient(platform).get('/v1/maintenance');
    expect(anonymous.status).toBe(401);
  });

  it('demands If-Match (428 missing, 412 stale) and a reason to turn on, changing nothing', async () => {
    const before = await admin.get('/v1/admin/settings/maintenance');
    const missing = await admin.put('/v1/admin/settings/maintenance', { enabled: true, reason: 'upgrade' });
    expect(missing.status).toBe(428);
    const stale = await admin.put('/v1/admin/settings/maintenance', { enabled: true, reason: 'upgrade' }, { 'if-match': '"999"' });
    expect(stale.status).toBe(412);
    const noReason = await admin.put('/v1/admin/settings/maintenance', { enabled: true }, { 'if-match': etagOf(before) });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.fields).toEqual([expect.objectContaining({ field: 'reason' })]);
    const blankReason = await admin.put('/v1/admin/settings/maintenance', { enabled: true, reason: '   ' }, { 'if-match': etagOf(before) });
    expect(blankReason.status).toBe(400);
    const unknownField = await admin.put('/v1/admin/settings/maintenance', { enabled: true, reason: 'x', colour: 'red' }, { 'if-match': etagOf(before) });
    expect(unknownField.status).toBe(400);
    const after = await admin.get('/v1/admin/settings/maintenance');
    expect(after.body.data).toEqual(before.body.data);
  });

  it('refuses a planned end outside years 0001 to 9999 in UTC with 400 naming plannedEndAt (it was a 500), changing nothing', async () => {
    const before = await admin.get('/v1/admin/settings/maintenance');
    for (const plannedEndAt of ['9999-12-31T23:00:00-05:00', '0000-12-31T23:00:00Z']) {
      const refused = await admin.put('/v1/admin/settings/maintenance', { enabled: true, reason: 'upgrade', plannedEndAt }, { 'if-match': etagOf(before) });
      expect({ plannedEndAt, status: refused.status }).toEqual({ plannedEndAt, status: 400 });
      expect(refused.body.error.fields).toEqual([expect.objectContaining({ field: 'plannedEndAt' })]);
    }
    const after = await admin.get('/v1/admin/settings/maintenance');
    expect(after.body.data).toEqual(before.body.data);
  });

  it('refuses API keys and people who are not platform admins', async () => {
    const viaKey = ApiClient.withApiKey(platform, 'rag_unknown_notarealsecretvalue');
    expect((await viaKey.put('/v1/admin/settings/maintenance', { enabled: false }, { 'if-match': '"1"' })).status).toBe(401);
    const noSession = new ApiClient(platform);
    expect((await noSession.put('/v1/admin/settings/maintenance', { enabled: false }, { 'if-match': '"1"' })).status).toBe(401);
  });

  it('turns on, updates and ends, auditing each step on the platform team; every process sees each change', async () => {
    // Two more processes' worth of watchers: one hears the shared cache's signal (and never re-reads in this
    // test's time), the other never hears a signal and relies on its periodic re-read alone.
    const config = platform.platform.context.config;
    const sharedCache = config.cache.kind === 'redis' ? createCache(config.cache, logger) : null;
    const bySignal = sharedCache ? await watcher(sharedCache, 3_600_000) : null;
    const byReread = await watcher(createMemoryCache({ keyPrefix: 'elsewhere:', logger }), 300);
    try {
      const plannedEndAt = new Date(Date.now() + 3_600_000).toISOString();
      const on = await put({ enabled: true, reason: 'Database upgrade', plannedEndAt });
      expect(on.status).toBe(200);
      expect(on.body.data).toMatchObject({ enabled: true, reason: 'Database upgrade', plannedEndAt });
      expect(on.body.data.startedAt).not.toBeNull();
      expect(on.body.data.startedBy).toMatchObject({ email: TEST_ADMIN.email });
      expect(on.body.data.updatedBy).toMatchObject({ email: TEST_ADMIN.email });
      expect(etagOf(on)).toBe(`"${on.body.data.revision}"`);
      expect((await admin.get('/v1/maintenance')).body.data.enabled).toBe(true);

      if (bySignal) await eventually(() => bySignal.isOn(), (on) => on);
      await eventually(() => byReread.isOn(), (on) => on);
      expect(() => byReread.assertAvailable('new ingestion')).toThrow(
        expect.objectContaining({ code: 'maintenance', message: 'Maintenance in progress: Database upgrade; new ingestion is paused' }),
      );
      let resumed = false;
      const parked = byReread.whenAvailable().then(() => {
        resumed = true;
      });

      const sameAgain = await put({ enabled: true, reason: 'Database upgrade', plannedEndAt });
      expect(sameAgain.body.data.revision).toBe(on.body.data.revision);

      const update = await put({ enabled: true, reason: 'Database upgrade, phase 2', plannedEndAt: null });
      expect(update.status).toBe(200);
      expect(update.body.data).toMatchObject({ reason: 'Database upgrade, phase 2', plannedEndAt: null, startedAt: on.body.data.startedAt });
      if (bySignal) await eventually(() => bySignal.current().reason, (reason) => reason === 'Database upgrade, phase 2');

      const off = await put({ enabled: false });
      expect(off.status).toBe(200);
      expect(off.body.data).toMatchObject({ enabled: false, reason: '', startedAt: null, startedBy: null });
      expect(off.body.data.updatedBy).toMatchObject({ email: TEST_ADMIN.email });
      if (bySignal) await eventually(() => bySignal.isOn(), (on) => !on);
      await parked;
      expect(resumed).toBe(true);
      expect(() => byReread.assertAvailable('new ingestion')).not.toThrow();

      const offAgain = await put({ enabled: false });
      expect(offAgain.status).toBe(200);
      expect(offAgain.body.data.revision).toBe(off.body.data.revision);

      const audit = await eventually(
        () => admin.get('/v1/teams/platform/audit?action=platform.'),
        (response) => response.status === 200 && response.body.data.filter((e: { action: string }) => e.action.startsWith('platform.maintenance_')).length >= 3,
      );
      const entries = audit.body.data.filter((e: { action: string }) => e.action.startsWith('platform.maintenance_'));
      expect(entries.map((e: { action: string }) => e.action)).toEqual([
        'platform.maintenance_end',
        'platform.maintenance_update',
        'platform.maintenance_start',
      ]);
      const [end, , start] = entries;
      expect(start).toMatchObject({
        teamSlug: 'platform',
        targetType: 'maintenance',
        actor: { kind: 'user', email: TEST_ADMIN.email },
        before: { enabled: false },
        after: { enabled: true, reason: 'Database upgrade', plannedEndAt },
        via: { kind: 'session' },
      });
      expect(end).toMatchObject({ before: { enabled: true, reason: 'Database upgrade, phase 2' }, after: { enabled: false } });
    } finally {
      await bySignal?.stop();
      await sharedCache?.close();
    }
  });
});
