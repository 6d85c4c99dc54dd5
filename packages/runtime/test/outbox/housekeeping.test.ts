import { randomUUID } from 'node:crypto';
import { describeWith } from '@platform/test';
import { createMemoryBus } from '../../src/bus';
import { migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { OutboxRelay, runtimeMigrationsFor } from '../../src/outbox';
import { waitFor } from '../bus/wait-for';
import { scratchPostgres } from '../db/scratch-postgres';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

const logger = createLogger({ level: 'silent' });

/** The relay's housekeeping: what it deletes, and what it leaves, on either database. */
function housekeeping(database: () => Database): void {
  let schema: string;
  beforeEach(async () => {
    schema = `hk_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(database(), { schema, logger, migrations: runtimeMigrationsFor(schema) });
  });

  /** A processed-event mark made `daysAgo` days ago (timestamps set by the test). */
  const mark = (consumer: string, daysAgo: number) =>
    database().query(`INSERT INTO ${schema}.processed_events (consumer, event_id, processed_at) VALUES ($1, $2, now() - $3 * interval '1 day')`, [
      consumer,
      randomUUID(),
      daysAgo,
    ]);
  /** An outbox row written `daysAgo` days ago, sent then (or never). */
  const outboxRow = (note: string, sentDaysAgo: number | null) =>
    database().query(
      `INSERT INTO ${schema}.outbox (event_id, topic, payload, sent_at)
       VALUES ($1, 'things.v1', $2::jsonb, CASE WHEN $3::int IS NULL THEN NULL ELSE now() - $3::int * interval '1 day' END)`,
      [randomUUID(), JSON.stringify({ note }), sentDaysAgo],
    );
  const marks = async () =>
    (await database().query<{ consumer: string }>(`SELECT consumer FROM ${schema}.processed_events ORDER BY consumer`)).rows.map((r) => r.consumer);
  const outbox = async () =>
    (await database().query<{ note: string }>(`SELECT payload->>'note' AS note FROM ${schema}.outbox ORDER BY id`)).rows.map((r) => r.note);

  it('deletes processed-event marks past their retention (14 days by default) and sent events past theirs, in batches', async () => {
    for (let n = 0; n < 5; n += 1) await mark(`old-${n}`, 15);
    await mark('recent', 13);
    await mark('today', 0);
    await outboxRow('sent-long-ago', 8);
    await outboxRow('sent-lately', 6);
    await outboxRow('never-sent', null);

    const bus = createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger });
    // Batches of two: five old marks take three statements.
    const relay = new OutboxRelay({ db: database(), schema, bus, logger, housekeepingBatchSize: 2 });
    relay.start(); // housekeeping runs on the first round, then hourly
    try {
      await waitFor(async () => expect(await marks()).toEqual(['recent', 'today']));
      await waitFor(async () => expect(await outbox()).toEqual(['sent-lately', 'never-sent']));
    } finally {
      await relay.stop();
      await bus.close();
    }
  });

  it("keeps a parked event's mark however old, so the event is never handled twice", async () => {
    await mark('old-handled', 20);
    const parked = randomUUID();
    await database().query(`INSERT INTO ${schema}.processed_events (consumer, event_id, processed_at) VALUES ('old-parked', $1, now() - interval '20 days')`, [parked]);
    await database().query(
      `INSERT INTO ${schema}.parked_events (consumer, event_id, topic, partition, message_offset, envelope, error_class, error_message, attempts, parked_at)
       VALUES ('old-parked', $1, 'things.v1', 0, 7, '{}', 'TypeError', 'bug', 8, now() - interval '20 days')`,
      [parked],
    );
    const bus = createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger });
    const relay = new OutboxRelay({ db: database(), schema, bus, logger });
    relay.start();
    try {
      await waitFor(async () => expect(await marks()).toEqual(['old-parked']));
    } finally {
      await relay.stop();
      await bus.close();
    }
  });

  it('keeps marks for a longer retention when asked (topics kept longer in Kafka)', async () => {
    await mark('twenty-days', 20);
    await mark('forty-days', 40);
    const bus = createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger });
    const relay = new OutboxRelay({ db: database(), schema, bus, logger, processedRetentionMs: 30 * 24 * 60 * 60 * 1000 });
    relay.start();
    try {
      // One statement deletes every mark past the retention: once the forty-day one is gone, the run is over.
      await waitFor(async () => expect(await marks()).toEqual(['twenty-days']));
    } finally {
      await relay.stop();
      await bus.close();
    }
  });
}

describe('outbox housekeeping (PGlite)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(logger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());
  housekeeping(() => db);
});

describeWith('postgres', 'outbox housekeeping (Postgres)', (adminUrl) => {
  housekeeping(scratchPostgres(adminUrl, 3));
});
