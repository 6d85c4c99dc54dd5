import { randomUUID } from 'node:crypto';
import { memoryLogger } from '@platform/test';
import type { EventBus, Subscription } from '../../src/bus';
import { CacheUnavailableError } from '../../src/cache';
import { DatabaseUnavailableError, migrate, type Database, type Transaction } from '../../src/db';
import { AppError } from '../../src/errors';
import type { Logger } from '../../src/logging/logger';
import {
  consumeEvents,
  discardParkedEvent,
  listParkedEvents,
  OutboxRelay,
  replayParkedEvent,
  runtimeMigrationsFor,
  writeEvent,
  type ConsumeEventsOptions,
  type DomainEvent,
} from '../../src/outbox';
import { eventsParked } from '../../src/telemetry/metrics';
import { unlessNotHandled } from '../bus/bus-contract';
import { waitFor } from '../bus/wait-for';

export interface ParkedEventsFixture {
  db: Database;
  /** A bus with a fresh topic prefix, logging to `logger`. */
  openBus(logger: Logger): Promise<EventBus>;
}

/** Failures in a row before an event is parked, in these tests (the default, 8, takes about 11 s on Kafka). */
const PARK_AFTER = 3;
/** How long an event may take to be parked or handled here: the bus's back-off, and a slow CI machine. */
const PATIENCE_MS = 60_000;
const TEST_TIMEOUT_MS = 3 * PATIENCE_MS;

interface Thing {
  n: number;
  /** Set on the events the handler cannot take. */
  poison?: boolean;
  /** A value of the payload that must never reach a log line. */
  secret?: string;
  /** Stored as it is: a NUL makes the database refuse it. */
  note?: string;
}

/**
 * A consumer that cannot handle one event (a bug for one payload, a value the database refuses) sets it aside after a
 * few attempts and goes on; one whose dependency is down waits for it, never setting anything aside. Must hold for every
 * database/bus pairing the platform runs on.
 */
export function parkedEventsContract(fixture: () => ParkedEventsFixture): void {
  let schema: string;
  let bus: EventBus;
  let log: ReturnType<typeof memoryLogger>;
  const subscriptions: Subscription[] = [];
  const relays: OutboxRelay[] = [];

  beforeEach(async () => {
    const { db } = fixture();
    schema = `pk_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, {
      schema,
      logger: memoryLogger().logger,
      migrations: [...runtimeMigrationsFor(schema), { id: '0001_effects', sql: `CREATE TABLE ${schema}.effects (event_id uuid NOT NULL, note text NOT NULL)` }],
    });
    log = memoryLogger('parking');
    bus = await fixture().openBus(log.logger);
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await Promise.all(subscriptions.splice(0).map((s) => s.close()));
    await bus.close();
  });

  const db = () => fixture().db;

  /** Writes the events (one key, so one partition, in this order) and hands them to the bus. */
  const publish = async (things: Thing[]): Promise<DomainEvent<Thing>[]> => {
    const events: DomainEvent<Thing>[] = [];
    for (const data of things) {
      events.push(
        (await db().transaction((tx) => writeEvent(tx, schema, { topic: 'things.v1', type: 'thing.created', key: 'one-key', data, source: 'tests' }))) as DomainEvent<Thing>,
      );
    }
    const relay = new OutboxRelay({ db: db(), schema, bus, logger: log.logger, pollMs: 60_000, batchSize: 50 });
    relays.push(relay);
    // The in-process bus reports a failing consumer to the relay (the rows stay unsent); Kafka does not.
    await relay.drainOnce().catch(unlessNotHandled);
    return events;
  };

  /** Publishes the events straight to the bus, as the edge publishes call records (no outbox: any JSON value arrives). */
  const publishDirectly = async (things: Thing[]): Promise<DomainEvent<Thing>[]> => {
    const events = things.map((data) => ({ id: randomUUID(), type: 'thing.created', source: 'tests', occurredAt: new Date().toISOString(), data }));
    await bus
      .publish(events.map((event) => ({ topic: 'things.v1', key: 'one-key', value: JSON.stringify(event), headers: { 'event-id': event.id } })))
      .catch(unlessNotHandled);
    return events;
  };

  const consume = async (options: Pick<ConsumeEventsOptions, 'handler' | 'batch'>) => {
    subscriptions.push(
      await consumeEvents({ bus, db: db(), schema, consumer: 'things-store', topics: ['things.v1'], logger: log.logger, parkAfterAttempts: PARK_AFTER, ...options }),
    );
  };

  const store = (tx: Transaction, event: DomainEvent<unknown>) =>
    tx.query(`INSERT INTO ${schema}.effects (event_id, note) VALUES ($1, $2)`, [event.id, (event.data as Thing).note ?? 'stored']);
  const stored = async () => (await db().query<{ event_id: string }>(`SELECT event_id FROM ${schema}.effects`)).rows.map((r) => r.event_id).sort();
  const parkedRows = async () =>
    (
      await db().query<Record<string, unknown>>(
        `SELECT consumer, event_id, topic, partition, message_offset::text AS message_offset, message_key, envelope, error_class, error_message, attempts
           FROM ${schema}.parked_events ORDER BY parked_at`,
      )
    ).rows;
  const marked = async (eventId: string) =>
    (await db().query(`SELECT 1 FROM ${schema}.processed_events WHERE consumer = 'things-store' AND event_id = $1`, [eventId])).rowCount === 1;
  const parkedCount = async () => (await eventsParked.get()).values.find((v) => v.labels.consumer === 'things-store' && v.labels.topic === 'things.v1')?.value ?? 0;
  const ids = (events: DomainEvent<unknown>[]) => events.map((event) => event.id).sort();

  it('parks an event its handler always refuses after a few attempts, and handles every event behind it', async () => {
    const secret = `payload-secret-${randomUUID()}`;
    const attempts = new Map<string, number>();
    await consume({
      handler: async (event, tx) => {
        attempts.set(event.id, (attempts.get(event.id) ?? 0) + 1);
        const data = event.data as Thing;
        // A handler's own message quoting the payload, as a parser or a careless throw does (a line like a frame too).
        if (data.poison) throw new TypeError(`cannot take ${data.secret}\n    at ${data.secret}`);
        await store(tx, event);
      },
    });
    // The series is there, at 0, before anything is parked: increase() counts no series' first appearance.
    expect((await eventsParked.get()).values.some((v) => v.labels.consumer === 'things-store' && v.labels.topic === 'things.v1')).toBe(true);
    const parkedBefore = await parkedCount();
    const [first, poison, ...behind] = await publish([{ n: 1 }, { n: 2, poison: true, secret }, { n: 3 }, { n: 4 }]);

    await waitFor(async () => expect(await stored()).toEqual(ids([first!, ...behind])), PATIENCE_MS);
    expect(attempts.get(poison!.id)).toBe(PARK_AFTER);
    for (const event of [first!, ...behind]) expect(attempts.get(event.id)).toBe(1);

    // Set aside with its processed mark, the message as received and what went wrong.
    const rows = await parkedRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ consumer: 'things-store', event_id: poison!.id, topic: 'things.v1', message_key: 'one-key', error_class: 'TypeError', attempts: PARK_AFTER });
    expect(JSON.parse(rows[0]!.envelope as string)).toEqual(poison);
    expect(rows[0]!.error_message).toBe(`cannot take ${secret}\n    at ${secret}`);
    expect(await marked(poison!.id)).toBe(true);
    expect(await parkedCount()).toBe(parkedBefore + 1);

    // One error line, naming where the event is and the error's class; no log line holds a value of the payload.
    const lines = log.lines.filter((line) => line.msg?.startsWith('event parked'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', consumer: 'things-store', topic: 'things.v1', eventId: poison!.id, errorClass: 'TypeError', attempts: PARK_AFTER });
    expect(lines[0]!.partition).toBe(rows[0]!.partition);
    expect(lines[0]!.offset).toBe(rows[0]!.message_offset);
    expect(log.lines.some((line) => String(line.msg).startsWith('event handler failed'))).toBe(true);
    expect(log.text()).not.toContain(secret);

    // Delivered again (a relay that died before marking it sent): skipped, neither handled nor parked twice.
    await bus.publish([{ topic: 'things.v1', key: 'one-key', value: JSON.stringify(poison), headers: {} }]);
    const [later] = await publish([{ n: 5 }]);
    await waitFor(async () => expect(await stored()).toContain(later!.id), PATIENCE_MS);
    expect(attempts.get(poison!.id)).toBe(PARK_AFTER);
    expect(await parkedRows()).toHaveLength(1);
    expect(await parkedCount()).toBe(parkedBefore + 1);
  }, TEST_TIMEOUT_MS);

  it('retries for ever, never parking, an event that fails only because a dependency is down', async () => {
    // Many more failures than PARK_AFTER, each saying only that something is briefly down or busy.
    const outage: Array<(tx: Transaction) => Promise<never>> = [
      () => Promise.reject(new DatabaseUnavailableError(new Error('connect ECONNREFUSED 127.0.0.1:5432'))),
      () => Promise.reject(new DatabaseUnavailableError(new Error('Connection terminated unexpectedly'))),
      () => Promise.reject(new AppError('unavailable', 'Service unavailable')), // another service's gRPC UNAVAILABLE
      () => Promise.reject(new CacheUnavailableError()),
      async (tx) => {
        // The database's own serialization failure and deadlock.
        await tx.query(`DO $$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END $$`);
        throw new Error('unreachable');
      },
      async (tx) => {
        await tx.query(`DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`);
        throw new Error('unreachable');
      },
      () => Promise.reject(new DatabaseUnavailableError(new Error('timeout exceeded when trying to connect'))),
      () => Promise.reject(new AppError('deadline_exceeded', 'The service did not answer in time')),
    ];
    let failures = 0;
    const handledIds: string[] = [];
    await consume({
      handler: async (event, tx) => {
        if ((event.data as Thing).n === 1 && failures < outage.length) await outage[failures++]!(tx);
        await store(tx, event);
        handledIds.push(event.id);
      },
    });
    const events = await publish([{ n: 1 }, { n: 2 }]);

    await waitFor(async () => expect(await stored()).toEqual(ids(events)), PATIENCE_MS);
    expect(failures).toBe(outage.length);
    expect(handledIds).toEqual(events.map((event) => event.id));
    expect(await parkedRows()).toEqual([]);
    expect(log.lines.filter((line) => line.msg?.startsWith('event parked'))).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('takes a failing batch event by event: the others are stored, only the one at fault is parked', async () => {
    const calls: string[][] = [];
    await consume({
      handler: () => Promise.reject(new Error('the batch handler is used')),
      batch: {
        maxBatch: 50,
        handler: async (events, tx) => {
          calls.push(events.map((event) => event.id));
          // One statement for the batch, as the call-record and audit stores do: one refused value fails it all.
          await tx.query(`INSERT INTO ${schema}.effects (event_id, note) SELECT * FROM unnest($1::uuid[], $2::text[])`, [
            events.map((event) => event.id),
            events.map((event) => (event.data as Thing).note ?? 'stored'),
          ]);
        },
      },
    });
    const events = await publishDirectly([{ n: 1 }, { n: 2 }, { n: 3, note: 'a NUL \u0000 the database refuses' }, { n: 4 }, { n: 5 }]);
    const poison = events[2]!;
    const good = events.filter((event) => event !== poison);

    await waitFor(async () => expect((await parkedRows()).map((row) => row.event_id)).toEqual([poison.id]), PATIENCE_MS);
    await waitFor(async () => expect(await stored()).toEqual(ids(good)), PATIENCE_MS);
    const [row] = await parkedRows();
    expect(row).toMatchObject({ error_class: 'DatabaseError 22021', attempts: PARK_AFTER });
    // Counted towards parking only when handed over alone; every good event stored once.
    expect(calls.filter((call) => call.length === 1 && call[0] === poison.id)).toHaveLength(PARK_AFTER);
    expect((await db().query(`SELECT count(*)::int AS n FROM ${schema}.effects`)).rows[0]).toEqual({ n: good.length });
    expect(await marked(poison.id)).toBe(true);
  }, TEST_TIMEOUT_MS);

  it('lists, replays and discards parked events; a replay that fails again leaves the event parked', async () => {
    let fixed = false;
    const runs = new Map<string, number>();
    const handler: ConsumeEventsOptions['handler'] = async (event, tx) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      if ((event.data as Thing).poison && !fixed) throw new RangeError('not yet');
      await store(tx, event);
    };
    await consume({ handler });
    const [bad, worse, good] = await publish([{ n: 1, poison: true }, { n: 2, poison: true }, { n: 3 }]);
    await waitFor(async () => expect(await stored()).toEqual([good!.id]), PATIENCE_MS);

    const listed = await listParkedEvents(db(), schema, 'things-store');
    expect(listed.map((event) => event.eventId)).toEqual([bad!.id, worse!.id]);
    expect(listed[0]).toMatchObject({ consumer: 'things-store', type: 'thing.created', topic: 'things.v1', attempts: PARK_AFTER, errorClass: 'RangeError', errorMessage: 'not yet' });
    expect(listed[0]!.parkedAt).toBeInstanceOf(Date);
    expect(await listParkedEvents(db(), schema, 'someone-else')).toEqual([]);

    // Still failing: reported, left parked, the attempt counted; nothing of it kept.
    const replay = (eventId: string) => replayParkedEvent({ db: db(), schema, consumer: 'things-store', eventId, handler });
    expect(await replay(bad!.id)).toEqual({ result: 'failed', errorClass: 'RangeError', errorMessage: 'not yet' });
    expect((await listParkedEvents(db(), schema, 'things-store'))[0]).toMatchObject({ eventId: bad!.id, attempts: PARK_AFTER + 1 });
    expect(await stored()).toEqual([good!.id]);

    // Fixed: handled once, in the transaction that deletes its parked row; a second replay finds nothing.
    fixed = true;
    const runsBefore = runs.get(bad!.id);
    expect(await replay(bad!.id)).toEqual({ result: 'replayed' });
    expect(runs.get(bad!.id)).toBe(runsBefore! + 1);
    expect(await stored()).toEqual(ids([bad!, good!]));
    expect(await replay(bad!.id)).toEqual({ result: 'gone' });
    expect(runs.get(bad!.id)).toBe(runsBefore! + 1);

    // Discarded: gone from the list, never handled (its processed mark stays, so a redelivery skips it too).
    expect(await discardParkedEvent(db(), schema, 'things-store', worse!.id)).toBe(true);
    expect(await discardParkedEvent(db(), schema, 'things-store', worse!.id)).toBe(false);
    expect(await listParkedEvents(db(), schema)).toEqual([]);
    expect(await marked(worse!.id)).toBe(true);
    await bus.publish([{ topic: 'things.v1', key: 'one-key', value: JSON.stringify(worse), headers: {} }]);
    const [later] = await publish([{ n: 4 }]);
    await waitFor(async () => expect(await stored()).toContain(later!.id), PATIENCE_MS);
    expect(await stored()).not.toContain(worse!.id);
  }, TEST_TIMEOUT_MS);
}
