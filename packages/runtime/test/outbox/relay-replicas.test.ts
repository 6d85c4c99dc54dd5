import { randomUUID } from 'node:crypto';
import { createTestDatabase, describeWith } from '@platform/test';
import type { BusMessage, EventBus } from '../../src/bus';
import { createPostgresDatabase, migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { OutboxRelay, runtimeMigrationsFor, writeEvent } from '../../src/outbox';

const logger = createLogger({ level: 'silent' });

/** A promise the test resolves when it chooses. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * A bus that records what reaches it, in arrival order. While `hold` is set, a publish first announces itself
 * (`entered`) and then waits for `hold` to open, as a publish does while the broker is slow.
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

describeWith('postgres', 'outbox relays sharing a schema (Postgres)', (adminUrl) => {
  let testDb: { url: string; drop(): Promise<void> };
  let db: Database;
  let schema: string;
  beforeAll(async () => {
    testDb = await createTestDatabase(adminUrl());
    db = createPostgresDatabase({ url: testDb.url, poolMax: 5, logger });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });
  beforeEach(async () => {
    schema = `rr_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, { schema, logger, migrations: runtimeMigrationsFor(schema) });
  });

  const write = (step: string) =>
    db.transaction((tx) => writeEvent(tx, schema, { topic: 'catalog.v1', type: `server.${step}`, key: 'server-1', data: { step }, source: 'tests' }));

  it("publishes one key's events in the order written while another replica is mid-publish", async () => {
    for (const step of ['unhealthy', 'healthy', 'unhealthy-again']) await write(step);
    const published: string[] = [];
    const slow = recordingBus(published);
    const fast = recordingBus(published);
    const first = new OutboxRelay({ db, schema, bus: slow.bus, logger, batchSize: 2 });
    const second = new OutboxRelay({ db, schema, bus: fast.bus, logger, batchSize: 2 });

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
    const unsent = await db.query(`SELECT 1 FROM ${schema}.outbox WHERE sent_at IS NULL`);
    expect(unsent.rowCount).toBe(0);
  });

  it('lets another replica publish once the first has finished its batch', async () => {
    await write('unhealthy');
    const published: string[] = [];
    const first = new OutboxRelay({ db, schema, bus: recordingBus(published).bus, logger });
    const second = new OutboxRelay({ db, schema, bus: recordingBus(published).bus, logger });
    expect(await first.drainOnce()).toBe(1);
    await write('healthy');
    expect(await second.drainOnce()).toBe(1);
    expect(published).toEqual(['unhealthy', 'healthy']);
  });
});
