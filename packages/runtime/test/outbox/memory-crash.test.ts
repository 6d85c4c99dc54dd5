import { randomUUID } from 'node:crypto';
import { createMemoryBus, MemoryBroker, type EventBus } from '../../src/bus';
import { migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { consumeEvents, OutboxRelay, runtimeMigrationsFor, writeEvent, type DomainEvent } from '../../src/outbox';
import type { Transaction } from '../../src/db';
import { waitFor } from '../bus/wait-for';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

const logger = createLogger({ level: 'silent' });
const EVENTS = 50;

function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * `--target=all` without Kafka: the outbox on the embedded database and the in-process bus. The database outlives
 * the process (its data directory); the bus, the consumers' backlog and the relay do not. Each "process" here is a
 * broker, a bus, a relay and a consumer of its own on the one database.
 */
describe('outbox on the in-process bus, across the end of a process', () => {
  let db: Database;
  let schema: string;
  beforeAll(async () => {
    db = await startedMemoryPglite(logger);
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());
  beforeEach(async () => {
    schema = `mc_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, {
      schema,
      logger,
      migrations: [...runtimeMigrationsFor(schema), { id: '0001_effects', sql: 'CREATE TABLE effects (event_id uuid NOT NULL)' }],
    });
  });

  function startProcess(handle: (event: DomainEvent<unknown>, tx: Transaction) => Promise<void>) {
    const bus: EventBus = createMemoryBus({ topicPrefix: '', logger, broker: new MemoryBroker(), retryBackoff: { initialMs: 20, maxMs: 200 } });
    const relay = new OutboxRelay({ db, schema, bus, logger, batchSize: 10, pollMs: 50 });
    const subscription = consumeEvents({
      bus,
      db,
      schema,
      consumer: 'effects-writer',
      topics: ['things.v1'],
      logger,
      handler: async (event, tx) => {
        await handle(event, tx);
        await tx.query(`INSERT INTO ${schema}.effects (event_id) VALUES ($1)`, [event.id]);
      },
    });
    return { bus, relay, subscription };
  }

  const writeBacklog = async () => {
    const ids: string[] = [];
    for (let n = 0; n < EVENTS; n += 1) {
      const event = await db.transaction((tx) => writeEvent(tx, schema, { topic: 'things.v1', type: 'thing.done', key: `k${n % 3}`, data: { n }, source: 'tests' }));
      ids.push(event.id);
    }
    return ids;
  };
  const column = async (sql: string) => (await db.query<{ event_id: string }>(sql)).rows.map((row) => row.event_id).sort();
  const sentIds = () => column(`SELECT event_id FROM ${schema}.outbox WHERE sent_at IS NOT NULL`);
  const processedIds = () => column(`SELECT event_id FROM ${schema}.processed_events`);
  const effectIds = () => column(`SELECT event_id FROM ${schema}.effects`);

  /** The next process: every event takes effect, the ones handled before the end not again. */
  async function restartAndCheck(ids: string[], handledBefore: string[]): Promise<void> {
    const ranAfterRestart: string[] = [];
    const next = startProcess(async (event) => void ranAfterRestart.push(event.id));
    const subscription = await next.subscription;
    next.relay.start();
    try {
      await waitFor(async () => expect(await sentIds()).toHaveLength(EVENTS));
      await waitFor(async () => expect(await processedIds()).toHaveLength(EVENTS));
    } finally {
      await next.relay.stop();
      await subscription.close();
      await next.bus.close();
    }
    expect(await effectIds()).toEqual([...ids].sort());
    expect(ranAfterRestart.sort()).toEqual(ids.filter((id) => !handledBefore.includes(id)).sort());
  }

  it('loses no event when the process ends mid-backlog without draining: the next one delivers each exactly once in effect', async () => {
    const ids = await writeBacklog();
    const handled: string[] = [];
    const stuck = gate();
    const killed = gate();
    const first = startProcess(async (event) => {
      if (handled.length === 7) {
        // The consumer is busy with the eighth event when the process goes.
        stuck.open();
        await killed.opened;
        throw new Error('process killed');
      }
      handled.push(event.id);
    });
    const subscription = await first.subscription;
    first.relay.start();
    await stuck.opened;

    // The end: the consumer goes away mid-handling, with what the relay published not yet handled; nothing drains.
    const closing = subscription.close();
    killed.open();
    await closing;
    await first.relay.stop();
    await first.bus.close();

    // Nothing the consumer had not handled (and committed) was marked sent.
    const sent = await sentIds();
    const processed = await processedIds();
    expect(processed).toEqual([...handled].sort());
    expect(sent.filter((id) => !processed.includes(id))).toEqual([]);

    await restartAndCheck(ids, handled);
  });

  it('marks sent only what the consumers have handled when a process stops in order (relay, then consumers)', async () => {
    const ids = await writeBacklog();
    const handled: string[] = [];
    const slow = gate();
    const first = startProcess(async (event) => {
      if (handled.length === 12) await slow.opened;
      handled.push(event.id);
    });
    const subscription = await first.subscription;
    first.relay.start();
    await waitFor(() => expect(handled.length).toBeGreaterThanOrEqual(12));

    // The relay stops first: its batch in flight is handled before it returns; then the consumer leaves.
    const stopping = first.relay.stop();
    slow.open();
    await stopping;
    await subscription.close();
    await first.bus.close();
    const sent = await sentIds();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(EVENTS);
    expect(sent.filter((id) => !handled.includes(id))).toEqual([]);

    await restartAndCheck(ids, handled);
  });
});
