import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { EventBus, Subscription } from '../../src/bus';
import { migrate, type Database } from '../../src/db';
import { createLogger } from '../../src/logging/logger';
import { consumeEvents, OutboxRelay, runtimeMigrationsFor, writeEvent, type DomainEvent } from '../../src/outbox';
import { eventsConsumed, outboxPublishFailures } from '../../src/telemetry/metrics';
import { tracer } from '../../src/telemetry/tracing';
import { unlessNotHandled } from '../bus/bus-contract';
import { waitFor } from '../bus/wait-for';

const logger = createLogger({ level: 'silent' });

export interface OutboxFixture {
  db: Database;
  /** A bus with a fresh topic prefix. */
  openBus(): Promise<EventBus>;
  spans: InMemorySpanExporter;
}

/** The outbox's guarantees, which must hold for every database/bus pairing. */
export function outboxContract(fixture: () => OutboxFixture): void {
  let schema: string;
  let bus: EventBus;
  const subscriptions: Subscription[] = [];
  const relays: OutboxRelay[] = [];

  beforeEach(async () => {
    const { db } = fixture();
    schema = `ob_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await migrate(db, {
      schema,
      logger,
      migrations: [
        ...runtimeMigrationsFor(schema),
        { id: '0001_effects', sql: 'CREATE TABLE effects (event_id uuid NOT NULL, note text NOT NULL)' },
      ],
    });
    bus = await fixture().openBus();
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await Promise.all(subscriptions.splice(0).map((s) => s.close()));
    await bus.close();
  });

  const relay = (on: EventBus = bus) => {
    const created = new OutboxRelay({ db: fixture().db, schema, bus: on, logger, pollMs: 5_000, batchSize: 10 });
    relays.push(created);
    return created;
  };

  /** An idempotent consumer whose handler records a row per run, in the handler's transaction. */
  const consume = async (handler?: (event: DomainEvent<unknown>) => void) => {
    const handled: DomainEvent<unknown>[] = [];
    const subscription = await consumeEvents({
      bus,
      db: fixture().db,
      schema,
      consumer: 'effects-writer',
      topics: ['things.v1'],
      logger,
      handler: async (event, tx) => {
        handler?.(event);
        await tx.query('INSERT INTO ' + schema + '.effects (event_id, note) VALUES ($1, $2)', [event.id, 'ran']);
        handled.push(event);
      },
    });
    subscriptions.push(subscription);
    return handled;
  };

  const consumed = async (result: string) =>
    (await eventsConsumed.get()).values.find(
      (v) => v.labels.consumer === 'effects-writer' && v.labels.topic === 'things.v1' && v.labels.result === result,
    )?.value ?? 0;

  const effects = async () =>
    (await fixture().db.query<{ event_id: string }>(`SELECT event_id FROM ${schema}.effects ORDER BY event_id`)).rows.map((r) => r.event_id);

  const write = (data: unknown, key = 'thing-1') =>
    fixture().db.transaction((tx) => writeEvent(tx, schema, { topic: 'things.v1', type: 'thing.created', key, data, source: 'tests' }));

  it('delivers an event written in a committed transaction, nudging the running relay', async () => {
    const handled = await consume();
    relay().start(); // polls only every 5 s: delivery within the wait below comes from the commit's nudge
    const event = await write({ name: 'widget' });
    expect(event).toMatchObject({ type: 'thing.created', source: 'tests', data: { name: 'widget' } });
    await waitFor(() => expect(handled.map((e) => e.id)).toEqual([event.id]), 4_000);
    expect(handled[0]).toEqual(event);
    const row = await fixture().db.query<{ sent_at: unknown; headers: Record<string, string> }>(
      `SELECT sent_at, headers FROM ${schema}.outbox WHERE event_id = $1`,
      [event.id],
    );
    expect(row.rows[0]!.sent_at).toBeInstanceOf(Date);
    expect(row.rows[0]!.headers).toMatchObject({ 'event-id': event.id, 'event-type': 'thing.created' });
  });

  it('publishes nothing for a rolled-back transaction', async () => {
    await expect(
      fixture().db.transaction(async (tx) => {
        await writeEvent(tx, schema, { topic: 'things.v1', type: 'thing.created', data: {}, source: 'tests' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await relay().drainOnce()).toBe(0);
    expect((await fixture().db.query(`SELECT 1 FROM ${schema}.outbox`)).rowCount).toBe(0);
  });

  it('handles each event once even when a relay dies between publishing and marking sent', async () => {
    const raw: string[] = [];
    subscriptions.push(await bus.subscribe({ groupId: 'raw-counter', topics: ['things.v1'], handler: async (m) => void raw.push(m.value) }));
    const handled = await consume();
    const duplicatesBefore = await consumed('duplicate');
    const events = [await write({ n: 1 }, 'a'), await write({ n: 2 }, 'b'), await write({ n: 3 }, 'a')];

    // This relay's process "dies" right after the bus acknowledged the batch, before the UPDATE commits.
    const dying: EventBus = {
      ...bus,
      publish: async (messages) => {
        await bus.publish(messages);
        throw new Error('process died after publishing');
      },
    };
    const failuresBefore = (await outboxPublishFailures.get()).values.find((v) => v.labels.schema === schema)?.value ?? 0;
    await expect(relay(dying).drainOnce()).rejects.toThrow('process died');
    const failuresAfter = (await outboxPublishFailures.get()).values.find((v) => v.labels.schema === schema)?.value ?? 0;
    expect(failuresAfter).toBe(failuresBefore + 1);
    expect((await fixture().db.query(`SELECT 1 FROM ${schema}.outbox WHERE sent_at IS NULL`)).rowCount).toBe(3);

    // A fresh relay finds the batch unsent and publishes it again.
    expect(await relay().drainOnce()).toBe(3);
    expect(await relay().drainOnce()).toBe(0);
    await waitFor(() => expect(raw).toHaveLength(6)); // every event really was delivered twice
    // The consumer has seen all six deliveries once three were recognised as duplicates.
    await waitFor(async () => expect(await consumed('duplicate')).toBe(duplicatesBefore + 3));
    const ids = events.map((e) => e.id).sort();
    expect(handled.map((e) => e.id).sort()).toEqual(ids);
    const processed = await fixture().db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${schema}.processed_events WHERE consumer = 'effects-writer'`,
    );
    expect(processed.rows[0]!.n).toBe(3);
    expect(await effects()).toEqual(ids);
  });

  it('consumes in batches: one transaction per batch, each event once, duplicates left out', async () => {
    const batches: string[][] = [];
    subscriptions.push(
      await consumeEvents({
        bus,
        db: fixture().db,
        schema,
        consumer: 'batch-writer',
        topics: ['things.v1'],
        logger,
        handler: () => Promise.reject(new Error('the batch handler is used')),
        batch: {
          maxBatch: 50,
          handler: async (events, tx) => {
            for (const event of events) await tx.query(`INSERT INTO ${schema}.effects (event_id, note) VALUES ($1, 'batch')`, [event.id]);
            batches.push(events.map((event) => event.id));
          },
        },
      }),
    );
    const events = [await write({ n: 1 }), await write({ n: 2 }), await write({ n: 3 })];
    await relay().drainOnce();
    await waitFor(() => expect(batches.flat().sort()).toEqual(events.map((e) => e.id).sort()));
    // The same events again (a relay that died before marking them sent): nothing reaches the handler twice.
    await bus.publish(events.map((event) => ({ topic: 'things.v1', key: 'thing-1', value: JSON.stringify(event), headers: {} })));
    const later = await write({ n: 4 });
    await relay().drainOnce();
    await waitFor(() => expect(batches.flat()).toContain(later.id));
    expect(batches.flat().sort()).toEqual([...events, later].map((e) => e.id).sort());
    expect(await effects()).toEqual([...events, later].map((e) => e.id).sort());
  });

  it('retries an event whose handler fails, keeping none of the failed attempt', async () => {
    let failNext = true;
    const handled = await consume(() => {
      if (failNext) {
        failNext = false;
        throw new Error('transient');
      }
    });
    const event = await write({ n: 1 });
    // The in-process bus reports the failure to the relay, which keeps the event unsent for now; Kafka does not.
    await relay().drainOnce().catch(unlessNotHandled);
    await waitFor(() => expect(handled.map((e) => e.id)).toEqual([event.id]));
    expect(await effects()).toEqual([event.id]);
    await relay().drainOnce();
    expect((await fixture().db.query(`SELECT 1 FROM ${schema}.outbox WHERE sent_at IS NULL`)).rowCount).toBe(0);
    expect(handled.map((e) => e.id)).toEqual([event.id]);
  });

  it('skips a malformed message instead of retrying it forever', async () => {
    const handled = await consume();
    await bus.publish([{ topic: 'things.v1', key: 'thing-1', value: '{"not":"an event"', headers: {} }]);
    const event = await write({ n: 1 });
    await relay().drainOnce();
    await waitFor(() => expect(handled.map((e) => e.id)).toEqual([event.id]));
  });

  it('carries the trace context of the writer to the consumer handler', async () => {
    let handlerTraceId: string | undefined;
    await consume(() => {
      handlerTraceId = trace.getActiveSpan()?.spanContext().traceId;
    });
    let writerTraceId: string | undefined;
    await tracer.startActiveSpan('test request', async (span) => {
      writerTraceId = span.spanContext().traceId;
      await write({ traced: true });
      span.end();
    });
    // The relay runs outside any request: the trace must come from the stored headers, not the relay's context.
    await relay().drainOnce();
    await waitFor(() => expect(handlerTraceId).toBeDefined());
    expect(writerTraceId).toMatch(/^[0-9a-f]{32}$/);
    expect(handlerTraceId).toBe(writerTraceId);
    // The consumer span ends after the handler's transaction commits, a moment after the handler ran.
    const consumerSpan = () =>
      fixture().spans.getFinishedSpans().find((s) => s.name === 'things.v1 process' && s.spanContext().traceId === writerTraceId);
    await waitFor(() => expect(consumerSpan()).toBeDefined());
  });

  it("links a batch consumer's span to the writer of every event in the batch, under the first one's trace", async () => {
    const consumed: string[] = [];
    subscriptions.push(
      await consumeEvents({
        bus,
        db: fixture().db,
        schema,
        consumer: 'batch-tracer',
        topics: ['things.v1'],
        logger,
        handler: () => Promise.reject(new Error('the batch handler is used')),
        batch: { maxBatch: 50, handler: async (events) => void consumed.push(...events.map((event) => event.id)) },
      }),
    );
    // Three requests, each writing one event in a trace of its own.
    const writers: string[] = [];
    for (const n of [1, 2, 3]) {
      await tracer.startActiveSpan(`test request ${n}`, async (span) => {
        writers.push(span.spanContext().spanId);
        await write({ n });
        span.end();
      });
    }
    await relay().drainOnce();
    await waitFor(() => expect(consumed).toHaveLength(3));
    const batchSpans = () =>
      fixture().spans.getFinishedSpans().filter((s) => s.name === 'things.v1 process' && s.attributes['messaging.consumer.group.name'] === 'batch-tracer');
    // The bus may deliver the three in more than one batch; together the batches' spans link to every writer once.
    await waitFor(() => expect(batchSpans().reduce((n, s) => n + Number(s.attributes['messaging.batch.message_count']), 0)).toBe(3));
    const spans = batchSpans();
    expect(spans.flatMap((s) => s.links.map((link) => link.context.spanId)).sort()).toEqual([...writers].sort());
    for (const span of spans) {
      expect(span.links).toHaveLength(Number(span.attributes['messaging.batch.message_count']));
      // Its parent is still the first message's writer, which is among its links.
      expect(span.links[0]!.context.spanId).toBe(span.parentSpanContext?.spanId);
      expect(span.spanContext().traceId).toBe(span.links[0]!.context.traceId);
    }
  });
}
