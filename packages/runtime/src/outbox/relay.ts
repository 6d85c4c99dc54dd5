import { randomUUID } from 'node:crypto';
import type { BusMessage, EventBus } from '../bus/port';
import { backoffMs, Wakeup } from '../bus/wakeup';
import type { Database } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import type { Logger } from '../logging/logger';
import { outboxPublished, outboxPublishFailures, registerOutboxBacklog, type OutboxBacklog } from '../telemetry/metrics';
import { linksFromTraceHeaders, SpanKind, withSpan } from '../telemetry/tracing';
import { relaySignal } from './nudge';

export interface OutboxRelayOptions {
  db: Database;
  schema: string;
  bus: EventBus;
  logger: Logger;
  /** How often to look for unsent events when not nudged (default 1000 ms). */
  pollMs?: number;
  /** Events per batch (default 100). */
  batchSize?: number;
  /** Sent events older than this are deleted (default 7 days). */
  retentionMs?: number;
  /**
   * Consumers' processed-event marks (`processed_events`) older than this are deleted (default 14 days). A mark
   * must outlive any redelivery of its event, or a late copy would take effect twice: keep it longer than the
   * topics' retention in Kafka (7 days by default), a group that lost its offsets re-reading from the earliest
   * retained message. The default is that plus a week of margin (and a week more than `retentionMs` by default).
   */
  processedRetentionMs?: number;
  /** Rows deleted per statement by housekeeping (default 1000), so no deletion holds many locks or a long transaction. */
  housekeepingBatchSize?: number;
  /**
   * How long a claimed batch stays reserved for the relay publishing it (default 30 s). It is renewed while the
   * publish lasts; it only runs out when the relay is gone, and then another relay publishes the batch again.
   */
  leaseMs?: number;
}

/** An unsent event as the relay claims it from the outbox. */
interface UnsentEvent {
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
  /** Whether another claim on the row is still live (a relay is publishing it now). */
  leased: boolean;
}

/** A batch this relay has claimed: its rows, oldest first, and the token its lease carries. */
interface Claim {
  token: string;
  rows: UnsentEvent[];
}

const HOUSEKEEPING_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Publishes a schema's outbox to the bus, in order, in three steps, so no database transaction (nor, on the
 * embedded database, its one connection) is held while the bus works:
 *
 * 1. claim, in a short transaction: under a transaction-level advisory lock keyed by the schema (a replica that
 *    does not get it skips the round), the oldest unsent rows get a lease (`claimed_until`, `claimed_by`). When
 *    the oldest unsent rows are under a live lease, another relay is publishing them and this one skips the round
 *    too: one relay per schema publishes at a time, so a key's events reach the bus in the order written.
 * 2. publish, outside any transaction; the lease is renewed while the bus takes its time.
 * 3. mark the rows sent, in a second statement. If publishing fails the lease is released at once and the batch is
 *    claimed again; if the process dies, its lease runs out and another relay (or this one, restarted) publishes
 *    the batch again.
 *
 * Delivery is therefore at-least-once, and consumers deduplicate by event id (`consumeEvents`).
 */
export class OutboxRelay {
  private readonly schema: string;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private readonly processedRetentionMs: number;
  private readonly housekeepingBatchSize: number;
  private readonly leaseMs: number;
  private running = false;
  private loop: Promise<void> | undefined;
  private lastHousekeeping = 0;
  /** Ends a back-off early only on stop (a nudge must not turn a failing bus into a hot loop). */
  private stopped = new Wakeup();
  private unregisterBacklog: (() => void) | undefined;

  constructor(private readonly options: OutboxRelayOptions) {
    this.schema = assertSchemaName(options.schema);
    this.pollMs = options.pollMs ?? 1_000;
    this.batchSize = options.batchSize ?? 100;
    this.retentionMs = options.retentionMs ?? 7 * DAY_MS;
    this.processedRetentionMs = options.processedRetentionMs ?? 14 * DAY_MS;
    this.housekeepingBatchSize = options.housekeepingBatchSize ?? 1_000;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = new Wakeup();
    this.unregisterBacklog = registerOutboxBacklog(this.schema, () => this.backlog());
    this.loop = this.run();
  }

  /** Stops polling and resolves once the batch in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.unregisterBacklog?.();
    relaySignal(this.schema).notify();
    this.stopped.notify();
    await this.loop;
    this.loop = undefined;
  }

  /**
   * What this schema's outbox has not published yet, and how many events its consumers parked (the metrics read it at
   * scrape time; unsent rows are indexed, parked ones few).
   */
  async backlog(): Promise<OutboxBacklog> {
    const { rows } = await this.options.db.query<{ unsent: number; oldest: number; parked: number }>(
      `SELECT count(*)::int AS unsent, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest,
              (SELECT count(*)::int FROM ${this.schema}.parked_events) AS parked
         FROM ${this.schema}.outbox WHERE sent_at IS NULL`,
    );
    const row = rows[0];
    return { unsent: Number(row?.unsent ?? 0), oldestAgeSeconds: Math.max(0, Number(row?.oldest ?? 0)), parked: Number(row?.parked ?? 0) };
  }

  /**
   * Publishes one batch and returns how many events it held: 0 when there was nothing to send or another relay is
   * publishing this schema. Throws when publishing failed (nothing marked; the claim is released).
   */
  async drainOnce(): Promise<number> {
    const { bus } = this.options;
    const claim = await this.claim();
    if (!claim) return 0;
    const { rows, token } = claim;
    const ids = rows.map((row) => row.id);
    const messages: BusMessage[] = rows.map((row) => ({
      topic: row.topic,
      key: row.key,
      value: JSON.stringify(row.payload),
      // The trace context captured when the event was written rides along, so consumers join that trace.
      headers: row.headers,
    }));
    const renewal = setInterval(() => void this.renew(ids, token), Math.max(1, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    try {
      await withSpan(
        `${this.schema} outbox publish`,
        {
          kind: SpanKind.PRODUCER,
          // The relay runs in a trace of its own; its publish links to the trace of each event's writer.
          links: linksFromTraceHeaders(rows.map((row) => row.headers)),
          attributes: { 'messaging.system': bus.kind, 'messaging.operation': 'publish', 'messaging.batch.message_count': rows.length },
        },
        () => bus.publish(messages),
      );
    } catch (error) {
      clearInterval(renewal);
      outboxPublishFailures.inc({ schema: this.schema });
      // Given back at once, so the batch is retried without waiting for the lease to run out.
      await this.release(ids, token).catch((releaseError: unknown) =>
        this.options.logger.warn({ err: releaseError, schema: this.schema }, 'outbox claim not released; it lapses with its lease'),
      );
      throw error;
    }
    clearInterval(renewal);
    await this.options.db.query(
      `UPDATE ${this.schema}.outbox SET sent_at = now(), claimed_until = NULL, claimed_by = NULL
        WHERE id = ANY($1::bigint[]) AND sent_at IS NULL`,
      [ids],
      { prepared: `outbox_mark_sent_${this.schema}` },
    );
    for (const message of messages) outboxPublished.inc({ schema: this.schema, topic: message.topic });
    return rows.length;
  }

  /** Step 1: leases the oldest unsent rows to this relay, or returns null (nothing unsent, or another relay's turn). */
  private claim(): Promise<Claim | null> {
    return this.options.db.transaction(async (tx) => {
      // Claims are taken one at a time per schema; a replica that finds the lock taken tries again next round.
      const { rows: locked } = await tx.query<{ acquired: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS acquired',
        [`outbox_relay:${this.schema}`],
        { prepared: 'outbox_relay_lock' },
      );
      if (!locked[0]?.acquired) return null;
      const { rows } = await tx.query<UnsentEvent>(
        `SELECT id, topic, key, payload, headers, coalesce(claimed_until > now(), false) AS leased FROM ${this.schema}.outbox
          WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE`,
        [this.batchSize],
        // Runs for every batch of every service: prepared once per connection (one name per schema, as the text names it).
        { prepared: `outbox_claim_${this.schema}` },
      );
      // A live lease on the oldest unsent rows: another relay is publishing them, and whatever follows must wait.
      if (rows.length === 0 || rows.some((row) => row.leased)) return null;
      const token = randomUUID();
      await tx.query(
        `UPDATE ${this.schema}.outbox SET claimed_by = $2, claimed_until = now() + $3 * interval '1 millisecond'
          WHERE id = ANY($1::bigint[])`,
        [rows.map((row) => row.id), token, this.leaseMs],
        { prepared: `outbox_lease_${this.schema}` },
      );
      return { token, rows };
    });
  }

  /** Extends this relay's lease on a batch it is still publishing (a lost renewal only lets the lease lapse sooner). */
  private async renew(ids: string[], token: string): Promise<void> {
    try {
      await this.options.db.query(
        `UPDATE ${this.schema}.outbox SET claimed_until = now() + $3 * interval '1 millisecond'
          WHERE id = ANY($1::bigint[]) AND claimed_by = $2 AND sent_at IS NULL`,
        [ids, token, this.leaseMs],
        { prepared: `outbox_lease_renew_${this.schema}` },
      );
    } catch (error) {
      this.options.logger.warn({ err: error, schema: this.schema }, 'outbox lease not renewed');
    }
  }

  /** Gives a batch back unsent, unless its lease has passed to another relay meanwhile. */
  private async release(ids: string[], token: string): Promise<void> {
    await this.options.db.query(
      `UPDATE ${this.schema}.outbox SET claimed_until = NULL, claimed_by = NULL
        WHERE id = ANY($1::bigint[]) AND claimed_by = $2 AND sent_at IS NULL`,
      [ids, token],
      { prepared: `outbox_release_${this.schema}` },
    );
  }

  /** Deletes events sent before `cutoff`, a batch per statement; returns how many. */
  deleteSentBefore(cutoff: Date): Promise<number> {
    return this.deleteInBatches(
      `DELETE FROM ${this.schema}.outbox WHERE id IN (
         SELECT id FROM ${this.schema}.outbox WHERE sent_at < $1 LIMIT $2)`,
      cutoff,
    );
  }

  /**
   * Deletes consumers' processed-event marks made before `cutoff`, a batch per statement; returns how many. A parked
   * event's mark stays as long as it is parked: without it a late redelivery would be handled, and a replay after it
   * would handle the event twice.
   */
  deleteProcessedBefore(cutoff: Date): Promise<number> {
    return this.deleteInBatches(
      `DELETE FROM ${this.schema}.processed_events WHERE (consumer, event_id) IN (
         SELECT m.consumer, m.event_id FROM ${this.schema}.processed_events m
          WHERE m.processed_at < $1
            AND NOT EXISTS (SELECT 1 FROM ${this.schema}.parked_events p WHERE p.consumer = m.consumer AND p.event_id = m.event_id)
          LIMIT $2)`,
      cutoff,
    );
  }

  /** Whether `stop` was called while the loop runs (a direct call, the relay not started, is never stopping). */
  private get stopping(): boolean {
    return !this.running && this.loop !== undefined;
  }

  /** Runs a `DELETE … LIMIT $2` until it deletes less than a batch (or the relay is stopping). */
  private async deleteInBatches(sql: string, cutoff: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const { rowCount } = await this.options.db.query(sql, [cutoff, this.housekeepingBatchSize]);
      total += rowCount;
      if (rowCount < this.housekeepingBatchSize || this.stopping) return total;
    }
  }

  private async run(): Promise<void> {
    const signal = relaySignal(this.schema);
    let failures = 0;
    while (this.running) {
      let full = false;
      try {
        full = (await this.drainOnce()) === this.batchSize;
        failures = 0;
        await this.housekeeping();
      } catch (error) {
        failures += 1;
        this.options.logger.error({ err: error, schema: this.schema, failures }, 'outbox batch failed; will retry');
      }
      if (!this.running) break;
      if (failures > 0) await this.stopped.wait(backoffMs(failures, this.pollMs, MAX_BACKOFF_MS));
      else if (!full) await signal.wait(this.pollMs);
    }
  }

  private async housekeeping(): Promise<void> {
    if (Date.now() - this.lastHousekeeping < HOUSEKEEPING_EVERY_MS) return;
    this.lastHousekeeping = Date.now();
    const deleted = await this.deleteSentBefore(new Date(Date.now() - this.retentionMs));
    if (deleted > 0) this.options.logger.debug({ schema: this.schema, deleted }, 'old outbox events deleted');
    const forgotten = await this.deleteProcessedBefore(new Date(Date.now() - this.processedRetentionMs));
    if (forgotten > 0) this.options.logger.debug({ schema: this.schema, deleted: forgotten }, 'old processed-event marks deleted');
  }
}
