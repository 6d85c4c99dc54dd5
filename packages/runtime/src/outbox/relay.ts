import type { BusMessage, EventBus } from '../bus/port';
import { backoffMs, Wakeup } from '../bus/wakeup';
import type { Database } from '../db/port';
import { assertSchemaName } from '../db/schema-name';
import type { Logger } from '../logging/logger';
import { outboxPublished, outboxPublishFailures } from '../telemetry/metrics';
import { SpanKind, withSpan } from '../telemetry/tracing';
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
}

/** An unsent event as the relay claims it from the outbox. */
interface UnsentEvent {
  id: string;
  topic: string;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
}

const HOUSEKEEPING_EVERY_MS = 60 * 60 * 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Publishes a schema's outbox to the bus, in order. One relay per schema publishes at a time (a transaction-level
 * advisory lock; other replicas skip the round), so a key's events reach the bus in the order they were written.
 * A batch is locked, published, then marked sent, all in one transaction: if publishing fails nothing is marked
 * and the batch is retried; if the process dies after publishing but before committing, the next relay publishes
 * it again. Delivery is therefore at-least-once, and consumers deduplicate by event id (`consumeEvents`).
 */
export class OutboxRelay {
  private readonly schema: string;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private running = false;
  private loop: Promise<void> | undefined;
  private lastHousekeeping = 0;
  /** Ends a back-off early only on stop (a nudge must not turn a failing bus into a hot loop). */
  private stopped = new Wakeup();

  constructor(private readonly options: OutboxRelayOptions) {
    this.schema = assertSchemaName(options.schema);
    this.pollMs = options.pollMs ?? 1_000;
    this.batchSize = options.batchSize ?? 100;
    this.retentionMs = options.retentionMs ?? 7 * 24 * 60 * 60 * 1000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = new Wakeup();
    this.loop = this.run();
  }

  /** Stops polling and resolves once the batch in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.running = false;
    relaySignal(this.schema).notify();
    this.stopped.notify();
    await this.loop;
    this.loop = undefined;
  }

  /** Publishes one batch and returns how many events it held. Throws when publishing failed (nothing marked). */
  async drainOnce(): Promise<number> {
    const { db, bus } = this.options;
    return db.transaction(async (tx) => {
      // One relay per schema at a time: replicas that each published a batch of their own could reach the bus in
      // either order, and a key's events with them (server.unhealthy after server.healthy). The lock ends with
      // the transaction; a replica that does not get it skips this round.
      const { rows: locked } = await tx.query<{ acquired: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS acquired',
        [`outbox_relay:${this.schema}`],
        { prepared: 'outbox_relay_lock' },
      );
      if (!locked[0]?.acquired) return 0;
      const { rows } = await tx.query<UnsentEvent>(
        `SELECT id, topic, key, payload, headers FROM ${this.schema}.outbox
          WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize],
        // Runs for every batch of every service: prepared once per connection (one name per schema, as the text names it).
        { prepared: `outbox_claim_${this.schema}` },
      );
      if (rows.length === 0) return 0;
      const messages: BusMessage[] = rows.map((row) => ({
        topic: row.topic,
        key: row.key,
        value: JSON.stringify(row.payload),
        // The trace context captured when the event was written rides along, so consumers join that trace.
        headers: row.headers,
      }));
      try {
        await withSpan(
          `${this.schema} outbox publish`,
          {
            kind: SpanKind.PRODUCER,
            attributes: { 'messaging.system': bus.kind, 'messaging.operation': 'publish', 'messaging.batch.message_count': rows.length },
          },
          () => bus.publish(messages),
        );
      } catch (error) {
        outboxPublishFailures.inc({ schema: this.schema });
        throw error;
      }
      await tx.query(`UPDATE ${this.schema}.outbox SET sent_at = now() WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)], {
        prepared: `outbox_mark_sent_${this.schema}`,
      });
      for (const message of messages) outboxPublished.inc({ schema: this.schema, topic: message.topic });
      return rows.length;
    });
  }

  /** Deletes events sent longer ago than the retention; returns how many. */
  async deleteSentBefore(cutoff: Date): Promise<number> {
    const { rowCount } = await this.options.db.query(`DELETE FROM ${this.schema}.outbox WHERE sent_at < $1`, [cutoff]);
    return rowCount;
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
  }
}
