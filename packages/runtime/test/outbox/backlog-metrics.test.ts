import { randomUUID } from 'node:crypto';
import { createMemoryBus, type EventBus, type Subscription } from '../../src/bus';
import { migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { OutboxRelay, runtimeMigrationsFor, writeEvent } from '../../src/outbox';
import { metricsRegistry } from '../../src/telemetry/metrics';
import { waitFor } from '../bus/wait-for';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

const logger = createLogger({ level: 'silent' });

/** A gauge's value for one schema in the registry's text, as Prometheus scrapes it; undefined when it has no series. */
async function scraped(name: string, schema: string): Promise<number | undefined> {
  const line = (await metricsRegistry.metrics()).split('\n').find((text) => text.startsWith(`${name}{schema="${schema}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/**
 * platform_outbox_unsent and platform_outbox_oldest_unsent_age_seconds: what a schema's outbox has not published,
 * read at scrape time while its relay runs. The in-process bus holds a publish until its consumer has handled it, so
 * a consumer kept waiting keeps the events unsent.
 */
describe('outbox backlog metrics', () => {
  let db: Database;
  let bus: EventBus;
  let subscription: Subscription | undefined;
  let relay: OutboxRelay | undefined;
  let schema: string;

  beforeAll(async () => {
    db = await startedMemoryPglite(logger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());
  beforeEach(async () => {
    schema = `ob_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, { schema, logger, migrations: runtimeMigrationsFor(schema) });
    bus = createMemoryBus({ topicPrefix: `t-${randomUUID().slice(0, 8)}.`, logger, retryBackoff: { initialMs: 20, maxMs: 200 } });
  });
  afterEach(async () => {
    await relay?.stop();
    await subscription?.close();
    await bus.close();
  });

  it('counts unsent events and the age of the oldest while they wait, and shows none once they are published', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered = 0;
    // A plain subscriber (no transaction of its own: PGlite has one connection, which the scrapes need too).
    subscription = await bus.subscribe({
      groupId: 'slow',
      topics: ['things.v1'],
      handler: async () => {
        entered++;
        await released;
      },
    });
    for (const n of [1, 2]) {
      await db.transaction((tx) => writeEvent(tx, schema, { topic: 'things.v1', type: 'thing.created', key: `k${n}`, data: { n }, source: 'tests' }));
    }
    // Not running: nothing reports this schema.
    relay = new OutboxRelay({ db, schema, bus, logger, pollMs: 5_000 });
    expect(await scraped('platform_outbox_unsent', schema)).toBeUndefined();

    relay.start();
    await waitFor(() => expect(entered).toBe(1));
    expect(await scraped('platform_outbox_unsent', schema)).toBe(2);
    const age = await scraped('platform_outbox_oldest_unsent_age_seconds', schema);
    expect(age).toBeGreaterThan(0);
    // The age grows while the events wait (a later scrape, a later instant).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await scraped('platform_outbox_oldest_unsent_age_seconds', schema)).toBeGreaterThan(age!);

    release();
    await waitFor(async () => expect(await scraped('platform_outbox_unsent', schema)).toBe(0));
    expect(await scraped('platform_outbox_oldest_unsent_age_seconds', schema)).toBe(0);

    await relay.stop();
    relay = undefined;
    expect(await scraped('platform_outbox_unsent', schema)).toBeUndefined();
  });

  it('answers a scrape without the series when the database does not answer in time, instead of hanging', async () => {
    relay = new OutboxRelay({ db, schema, bus, logger, pollMs: 5_000 });
    relay.start();
    expect(await scraped('platform_outbox_unsent', schema)).toBe(0);
    // PGlite has one connection: a transaction left open holds every other query back.
    let release!: () => void;
    const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the scrape's one-second reuse of a read
    try {
      expect(await scraped('platform_outbox_unsent', schema)).toBeUndefined();
    } finally {
      release();
      await held;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await scraped('platform_outbox_unsent', schema)).toBe(0);
  });

  it('counts the events its consumers parked that wait for an operator (platform_events_parked_now)', async () => {
    relay = new OutboxRelay({ db, schema, bus, logger, pollMs: 5_000 });
    relay.start();
    expect(await scraped('platform_events_parked_now', schema)).toBe(0);
    for (const consumer of ['store-a', 'store-b']) {
      await db.query(
        `INSERT INTO ${schema}.parked_events (consumer, event_id, topic, partition, message_offset, envelope, error_class, error_message, attempts)
         VALUES ($1, $2, 'things.v1', 0, 7, '{}', 'TypeError', 'refused', 8)`,
        [consumer, randomUUID()],
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the scrape's one-second reuse of a read
    expect(await scraped('platform_events_parked_now', schema)).toBe(2);
    await db.query(`DELETE FROM ${schema}.parked_events WHERE consumer = 'store-a'`);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await scraped('platform_events_parked_now', schema)).toBe(1);
  });
});
