import { createCallRecorder, type CallRecorder } from '@platform/gateway';
import { createEventBus, createPostgresDatabase, type Database, type EventBus } from '@platform/runtime';
import { adminClient, describeWith, eventually, memoryLogger, newPerson, newTeam, startTestPlatform, type TestPerson, type TestPlatform } from '@platform/test';
import { callRecordRetention } from '../../src/domain/call-retention';
import { callEvent } from './fixtures';

const DAY_MS = 86_400_000;

/**
 * MCP_CALL_RETENTION_DAYS: records older than the retention are deleted by the catalog's hourly task, newer ones stay.
 * The task runs here on a pool of its own (as another catalog replica would), one round on demand.
 */
describeWith('postgres', 'call record retention', () => {
  let platform: TestPlatform;
  let bus: EventBus;
  let recorder: CallRecorder;
  let owner: TestPerson;
  let team: { slug: string; id: string };
  let db: Database;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { MCP_CALL_RETENTION_DAYS: '30' } });
    bus = createEventBus(platform.platform.context.config.bus, memoryLogger('edge').logger);
    recorder = createCallRecorder({ bus, logger: memoryLogger('recorder').logger });
    const admin = await adminClient(platform);
    owner = await newPerson(platform, admin, 'owner');
    const slug = await newTeam(admin, owner);
    team = { slug, id: (await admin.get(`/v1/teams/${slug}`)).body.data.id as string };
    db = createPostgresDatabase({ url: platform.env.DATABASE_URL!, poolMax: 2, logger: platform.platform.context.logger });
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await bus?.close();
    await platform?.stop();
  });

  const listed = async () => ((await owner.client.get(`/v1/teams/${team.slug}/calls?limit=200`)).body.data as { requestId: string }[]).map((call) => call.requestId);

  it('deletes records older than the retention and keeps the rest', async () => {
    const expired = [40, 31].map((days) => callEvent(team.id, { occurredAt: new Date(Date.now() - days * DAY_MS).toISOString() }));
    const kept = [29, 0].map((days) => callEvent(team.id, { occurredAt: new Date(Date.now() - days * DAY_MS).toISOString() }));
    for (const call of [...expired, ...kept]) recorder.record(call);
    await recorder.flush();
    await eventually(listed, (ids) => [...expired, ...kept].every((call) => ids.includes(call.requestId)));

    const { config, logger } = platform.platform.context;
    const task = callRecordRetention({ db, logger, config })!;
    expect(await task.runRound()).toBeGreaterThan(0);
    const ids = await listed();
    for (const call of expired) expect(ids).not.toContain(call.requestId);
    for (const call of kept) expect(ids).toContain(call.requestId);
    // Nothing is left to delete.
    expect(await task.runRound()).toBe(0);
  });

  it('keeps records for ever with 0', () => {
    const { config, logger } = platform.platform.context;
    expect(callRecordRetention({ db, logger, config: { ...config, env: { ...config.env, MCP_CALL_RETENTION_DAYS: 0 } } })).toBeNull();
  });
});
