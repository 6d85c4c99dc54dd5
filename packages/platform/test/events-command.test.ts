import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  consumeEvents,
  createLogger,
  createMemoryBus,
  createPgliteDatabase,
  createPostgresDatabase,
  MessageNotHandledError,
  migrateService,
  TOPICS,
  type Database,
  type DomainEvent,
  type EventBus,
  type Subscription,
} from '@platform/runtime';
import { createTestDatabase, describeWith, expectEventually, memoryLogger, runPlatformCommand, type CommandRun } from '@platform/test';
import { consumerOptions } from '../src/modules/consumer-options';
import { SERVICES } from '../src/services';

const CONSUMER = 'identity.audit-store';

/** Runs `platform events …` as an operator would: a process of its own, with only the database in its environment. */
function runEvents(args: string[], databaseUrl: string, storage: Record<string, string> = { DATABASE_URL: databaseUrl }): Promise<CommandRun> {
  // Redis and Kafka at closed ports: the command must need neither.
  return runPlatformCommand('events', args, { ...storage, REDIS_URL: 'redis://127.0.0.1:1', KAFKA_BROKERS: '127.0.0.1:1' });
}

/** An `audit.v1` event as services write them, with `metadata` of the test's choosing. */
function auditEvent(metadata: Record<string, unknown>): DomainEvent<unknown> {
  return {
    id: randomUUID(),
    type: 'audit.recorded',
    source: 'tests',
    occurredAt: new Date().toISOString(),
    data: {
      teamId: null,
      action: 'team.create',
      actor: { kind: 'system', userId: null, displayName: null, email: null, apiKeyName: null },
      target: { type: 'team', id: randomUUID(), label: 'A team' },
      metadata,
    },
  };
}

/**
 * The identity service's real audit store parks what it cannot store; `platform events` lists such events, replays
 * them with the same handler (built without starting the service) and discards them.
 */
describeWith('postgres', 'events command', (postgresUrl) => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let bus: EventBus;
  let subscription: Subscription | undefined;
  const log = memoryLogger('audit-store');

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    db = createPostgresDatabase({ url: database.url, poolMax: 4, logger: log.logger });
    await migrateService(db, { schema: 'identity', dir: SERVICES.identity.migrationsDir, logger: log.logger });
    bus = createMemoryBus({ topicPrefix: `events-command-${randomUUID().slice(0, 8)}.`, logger: log.logger, retryBackoff: { initialMs: 20, maxMs: 200 } });
  });
  afterAll(async () => {
    await subscription?.close();
    await bus?.close();
    await db?.close();
    await database?.drop();
  });

  const parkedIds = async () =>
    (await db.query<{ event_id: string; attempts: number }>(`SELECT event_id, attempts FROM identity.parked_events ORDER BY parked_at`)).rows;
  const storedIds = async () =>
    (await db.query<{ event_id: string }>(`SELECT event_id FROM identity.audit_entries ORDER BY event_id`)).rows.map((row) => row.event_id);

  it('lists what the audit store parked, replays it with the real handler, and discards what still fails', async () => {
    const secret = `metadata-secret-${randomUUID()}`;
    const stored = auditEvent({ note: 'fine' });
    // A NUL in a JSON string: PostgreSQL's jsonb refuses it, every time (the edge and other producers can send one).
    const refused = auditEvent({ note: `${secret}\u0000` });
    // Stored fine by the real handler; a bug of the running version (simulated below) refuses it.
    const buggy = auditEvent({ note: 'hit a bug' });

    const [auditStore] = SERVICES.identity.consumers!({ name: 'identity', logger: log.logger });
    const options = consumerOptions(auditStore!);
    const realBatch = options.batch!;
    subscription = await consumeEvents({
      bus,
      db,
      schema: 'identity',
      ...options,
      batch: {
        ...realBatch,
        handler: async (events, tx) => {
          if (events.some((event) => event.id === buggy.id)) throw new TypeError('a bug of the running version');
          await realBatch.handler(events, tx);
        },
      },
      logger: log.logger,
      parkAfterAttempts: 2,
    });
    await bus
      .publish([stored, refused, buggy].map((event) => ({ topic: TOPICS.audit, key: null, value: JSON.stringify(event), headers: { 'event-id': event.id } })))
      .catch((error: unknown) => {
        if (!(error instanceof MessageNotHandledError)) throw error;
      });
    await expectEventually(async () => expect((await parkedIds()).map((row) => row.event_id)).toEqual([refused.id, buggy.id]), 60_000);
    expect(await storedIds()).toEqual([stored.id]);

    // Both only read: run side by side (each command is a process that takes seconds to load).
    const [listed, everyConsumers] = await Promise.all([runEvents(['parked', '--consumer', CONSUMER], database.url), runEvents(['parked'], database.url)]);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    const rows = listed.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(rows[0]).toEqual(['consumer', 'event_id', 'type', 'topic', 'partition', 'offset', 'attempts', 'parked_at', 'error']);
    expect(rows.slice(1).map((row) => [row[0], row[1], row[2], row[3], row[6], row[8]!.split(':')[0]])).toEqual([
      [CONSUMER, refused.id, 'audit.recorded', TOPICS.audit, '2', 'DatabaseError 22P05'],
      [CONSUMER, buggy.id, 'audit.recorded', TOPICS.audit, '2', 'TypeError'],
    ]);
    // Every consumer's, without --consumer.
    expect(everyConsumers.stdout).toBe(listed.stdout);

    // The real handler stores the one the running version's bug refused; the other still fails and stays parked.
    const replayed = await runEvents(['replay', '--consumer', CONSUMER], database.url);
    expect(replayed.code).toBe(1);
    expect(replayed.stdout).toBe(`replayed ${buggy.id}\n`);
    expect(replayed.stderr).toMatch(new RegExp(`^still failing ${refused.id}: DatabaseError 22P05: .+ \\(left parked\\)\\n$`));
    expect(await storedIds()).toEqual([stored.id, buggy.id].sort());
    expect(await parkedIds()).toEqual([{ event_id: refused.id, attempts: 3 }]);

    const discarded = await runEvents(['discard', '--consumer', CONSUMER, '--event-id', refused.id], database.url);
    expect([discarded.code, discarded.stdout, discarded.stderr]).toEqual([0, `discarded ${refused.id}\n`, '']);
    expect(await parkedIds()).toEqual([]);
    const none = await runEvents(['parked', '--consumer', CONSUMER], database.url);
    expect([none.code, none.stdout, none.stderr]).toEqual([0, '', 'no parked events\n']);

    // Nothing of the payload in any log line or output.
    for (const text of [log.text(), listed.stdout, replayed.stdout, replayed.stderr]) expect(text).not.toContain(secret);
  }, 180_000);

  it('refuses unknown consumers, missing options and event ids that are none, and says when an event is not parked', async () => {
    const missing = randomUUID();
    // None of them changes anything: run side by side (each command is a process that takes seconds to load).
    const [unknown, noConsumer, noId, badId, notParked] = await Promise.all([
      runEvents(['parked', '--consumer', 'nobody'], database.url),
      runEvents(['replay'], database.url),
      runEvents(['discard', '--consumer', CONSUMER], database.url),
      runEvents(['discard', '--consumer', CONSUMER, '--event-id', "1' OR '1'='1"], database.url),
      runEvents(['replay', '--consumer', CONSUMER, '--event-id', missing], database.url),
    ]);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining(`events: unknown consumer nobody; consumers: ${CONSUMER}, catalog.call-records`)]);
    expect([noConsumer.code, noConsumer.stderr]).toEqual([2, expect.stringContaining('events: replay needs --consumer')]);
    expect([noId.code, noId.stderr]).toEqual([2, expect.stringContaining('events: discard needs --event-id')]);
    expect([badId.code, badId.stderr]).toEqual([2, expect.stringContaining('is not an event id (a UUID)')]);
    expect([notParked.code, notParked.stderr]).toEqual([1, `events: no parked event ${missing} for ${CONSUMER}\n`]);
  }, 120_000);

  it('refuses an embedded database that is not there, or that another process has open', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'events-embedded-'));
    try {
      const absent = await runEvents(['parked'], '', { DATA_DIR: dataDir });
      expect([absent.code, absent.stderr]).toEqual([2, expect.stringContaining(`events: no embedded database under ${path.join(dataDir, 'pg')} (DATA_DIR)`)]);
      expect(existsSync(path.join(dataDir, 'pg'))).toBe(false);

      // This test's process has it open, as a serving process would.
      const serving = createPgliteDatabase({ dataDir: path.join(dataDir, 'pg'), logger: createLogger({ level: 'silent' }) });
      try {
        await serving.ping();
        const refused = await runEvents(['parked'], '', { DATA_DIR: dataDir });
        expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`is open in process ${process.pid}; stop that process first`)]);
      } finally {
        await serving.close();
      }
      // Closed, it is the command's.
      expect(await runEvents(['parked'], '', { DATA_DIR: dataDir })).toMatchObject({ code: 0, stderr: expect.stringContaining('no parked events') });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
