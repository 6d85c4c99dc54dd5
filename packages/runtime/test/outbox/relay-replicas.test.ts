import { randomUUID } from 'node:crypto';
import { describeWith } from '@platform/test';
import type { BusMessage, EventBus } from '../../src/bus';
import { migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { OutboxRelay, runtimeMigrationsFor, writeEvent } from '../../src/outbox';
import { waitFor } from '../bus/wait-for';
import { scratchPostgres } from '../db/scratch-postgres';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

const logger = createLogger({ level: 'silent' });

/** A promise the test settles when it chooses. */
function gate(): { opened: Promise<void>; open(): void; fail(error: Error): void } {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { opened, open, fail };
}

/**
 * A bus that records what reaches it, in arrival order. While `hold` is set, a publish first announces itself
 * (`entered`) and then waits for `hold` to settle, as a publish does while the broker is slow (or fails).
 */
function recordingBus(published: string[]) {
  const control = {
    hold: undefined as { opened: Promise<void> } | undefined,
    entered: gate(),
    bus: {
      kind: 'memory',
      async publish(messages: BusMessage[]) {
        const hold = control.hold;
        if (hold) {
          control.entered.open();
          await hold.opened;
        }
        for (const message of messages) published.push((JSON.parse(message.value) as { data: { step: string } }).data.step);
      },
      subscribe: () => Promise.reject(new Error('not used')),
      ping: async () => undefined,
      close: async () => undefined,
    } satisfies EventBus,
  };
  return control;
}

/** What must hold for relays sharing a schema, on either database. */
function relaysSharingASchema(database: () => Database): void {
  let schema: string;
  beforeEach(async () => {
    schema = `rr_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(database(), { schema, logger, migrations: runtimeMigrationsFor(schema) });
  });

  const write = (step: string) =>
    database().transaction((tx) =>
      writeEvent(tx, schema, { topic: 'catalog.v1', type: `server.${step}`, key: 'server-1', data: { step }, source: 'tests' }),
    );
  const relay = (bus: EventBus, options: { batchSize?: number; leaseMs?: number } = {}) =>
    new OutboxRelay({ db: database(), schema, bus, logger, ...options });
  const unsent = async () => (await database().query(`SELECT 1 FROM ${schema}.outbox WHERE sent_at IS NULL`)).rowCount;

  it("publishes one key's events in the order written while another replica is mid-publish", async () => {
    for (const step of ['unhealthy', 'healthy', 'unhealthy-again']) await write(step);
    const published: string[] = [];
    const slow = recordingBus(published);
    const first = relay(slow.bus, { batchSize: 2 });
    const second = relay(recordingBus(published).bus, { batchSize: 2 });

    // The first replica claims the two oldest events; its publish is still on its way when the second one runs.
    const release = gate();
    slow.hold = release;
    const firstBatch = first.drainOnce();
    try {
      await slow.entered.opened;
      expect(await second.drainOnce()).toBe(0);
      expect(published).toEqual([]);
    } finally {
      release.open();
    }
    expect(await firstBatch).toBe(2);
    expect(await second.drainOnce()).toBe(1);
    expect(published).toEqual(['unhealthy', 'healthy', 'unhealthy-again']);
    expect(await unsent()).toBe(0);
  });

  it('lets another replica publish once the first has finished its batch', async () => {
    await write('unhealthy');
    const published: string[] = [];
    expect(await relay(recordingBus(published).bus).drainOnce()).toBe(1);
    await write('healthy');
    expect(await relay(recordingBus(published).bus).drainOnce()).toBe(1);
    expect(published).toEqual(['unhealthy', 'healthy']);
  });

  it('publishes again, in order, the batch of a relay that died while publishing, once its lease has run out', async () => {
    for (const step of ['unhealthy', 'healthy', 'unhealthy-again']) await write(step);
    const published: string[] = [];
    const dying = recordingBus([]);
    const dead = gate();
    dying.hold = dead;
    const lost = relay(dying.bus, { batchSize: 2 }).drainOnce();
    await dying.entered.opened;
    const survivor = relay(recordingBus(published).bus, { batchSize: 2 });
    // The lease is live: the batch is someone else's.
    expect(await survivor.drainOnce()).toBe(0);

    // The relay's process is gone: it renews nothing more, and its lease runs out (set here in the past).
    await database().query(`UPDATE ${schema}.outbox SET claimed_until = now() - interval '1 second' WHERE claimed_until IS NOT NULL`);
    expect(await survivor.drainOnce()).toBe(2);
    expect(await survivor.drainOnce()).toBe(1);
    expect(published).toEqual(['unhealthy', 'healthy', 'unhealthy-again']);
    expect(await unsent()).toBe(0);
    dead.fail(new Error('process gone'));
    await expect(lost).rejects.toThrow('process gone');
  });

  it('keeps the lease of the relay that took a lapsed batch over when the first one finally fails', async () => {
    await write('unhealthy');
    const stale = recordingBus([]);
    const staleHold = gate();
    stale.hold = staleHold;
    const staleBatch = relay(stale.bus).drainOnce();
    await stale.entered.opened;
    await database().query(`UPDATE ${schema}.outbox SET claimed_until = now() - interval '1 second' WHERE claimed_until IS NOT NULL`);

    const published: string[] = [];
    const current = recordingBus(published);
    const currentHold = gate();
    current.hold = currentHold;
    const currentBatch = relay(current.bus).drainOnce();
    await current.entered.opened;

    // The stale relay gives its claim back on failure: that must not free the batch the current one is publishing.
    staleHold.fail(new Error('broker unreachable'));
    await expect(staleBatch).rejects.toThrow('broker unreachable');
    const third: string[] = [];
    expect(await relay(recordingBus(third).bus).drainOnce()).toBe(0);
    currentHold.open();
    expect(await currentBatch).toBe(1);
    expect(published).toEqual(['unhealthy']);
    expect(third).toEqual([]);
  });

  it('gives a failed batch back at once, so the next round publishes it', async () => {
    await write('unhealthy');
    const failing = recordingBus([]);
    const hold = gate();
    failing.hold = hold;
    const attempt = relay(failing.bus).drainOnce();
    await failing.entered.opened;
    hold.fail(new Error('broker unreachable'));
    await expect(attempt).rejects.toThrow('broker unreachable');
    const published: string[] = [];
    expect(await relay(recordingBus(published).bus).drainOnce()).toBe(1);
    expect(published).toEqual(['unhealthy']);
  });

  it('renews the lease of a batch while its publish lasts', async () => {
    await write('unhealthy');
    const slow = recordingBus([]);
    const hold = gate();
    slow.hold = hold;
    const batch = relay(slow.bus, { leaseMs: 300 }).drainOnce();
    try {
      await slow.entered.opened;
      const leaseEnd = async () =>
        (await database().query<{ claimed_until: Date }>(`SELECT claimed_until FROM ${schema}.outbox`)).rows[0]!.claimed_until.getTime();
      const first = await leaseEnd();
      await waitFor(async () => expect(await leaseEnd()).toBeGreaterThan(first));
    } finally {
      hold.open();
    }
    expect(await batch).toBe(1);
    const row = await database().query<{ claimed_until: Date | null; claimed_by: string | null }>(
      `SELECT claimed_until, claimed_by FROM ${schema}.outbox`,
    );
    expect(row.rows[0]).toEqual({ claimed_until: null, claimed_by: null });
  });
}

describe('outbox relays sharing a schema (PGlite)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(logger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());

  relaysSharingASchema(() => db);

  it('publishes outside any transaction: the one connection stays free for what the publish waits on', async () => {
    const schema = `rr_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, { schema, logger, migrations: runtimeMigrationsFor(schema) });
    await db.transaction((tx) => writeEvent(tx, schema, { topic: 'catalog.v1', type: 'server.unhealthy', data: {}, source: 'tests' }));
    // As the in-process bus does: the publish resolves once a consumer has stored the event in the same database.
    const consumerWrites: EventBus = {
      ...recordingBus([]).bus,
      async publish() {
        await db.query(`SELECT count(*) FROM ${schema}.outbox`);
      },
    };
    expect(await new OutboxRelay({ db, schema, bus: consumerWrites, logger }).drainOnce()).toBe(1);
  });
});

describeWith('postgres', 'outbox relays sharing a schema (Postgres)', (adminUrl) => {
  const database = scratchPostgres(adminUrl, 5);
  relaysSharingASchema(database);

  it('holds no transaction or row lock while a publish waits on the bus', async () => {
    const db = database();
    const schema = `rr_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, { schema, logger, migrations: runtimeMigrationsFor(schema) });
    await db.transaction((tx) => writeEvent(tx, schema, { topic: 'catalog.v1', type: 'server.unhealthy', data: {}, source: 'tests' }));
    const slow = recordingBus([]);
    const hold = gate();
    slow.hold = hold;
    const batch = new OutboxRelay({ db, schema, bus: slow.bus, logger }).drainOnce();
    try {
      await slow.entered.opened;
      const locked = await db.transaction((tx) => tx.query(`SELECT id FROM ${schema}.outbox FOR UPDATE NOWAIT`));
      expect(locked.rowCount).toBe(1);
      const open = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`);
      expect(open.rowCount).toBe(0);
    } finally {
      hold.open();
    }
    expect(await batch).toBe(1);
  });
});
