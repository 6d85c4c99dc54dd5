/** The event bus port. Two adapters implement it: Kafka (kafkajs) and in-process. */

export interface BusMessage {
  /** Logical topic name, versioned (for example `audit.v1`); adapters add the configured prefix. */
  topic: string;
  /** Partitioning key: events with the same key are delivered in order. */
  key?: string | null;
  value: string;
  headers: Record<string, string>;
}

export interface ReceivedMessage extends BusMessage {
  partition: number;
  offset: string;
}

export interface SubscribeOptions {
  /** Consumer group: each message is handled by one member of a group; every group gets every message. */
  groupId: string;
  topics: string[];
  /** Start at the earliest retained message when the group has no committed position (default true). */
  fromBeginning?: boolean;
  /**
   * Called for each message, in order per partition. A rejected promise means "not handled": the message is
   * delivered again (at-least-once), so handlers must be idempotent (see `consumeEvents`).
   */
  handler(message: ReceivedMessage): Promise<void>;
  /**
   * Instead of `handler` one message at a time: up to `maxBatch` consecutive messages of one partition at once,
   * for consumers that store many small events (one transaction per batch instead of per message). A rejection
   * delivers the whole batch again.
   */
  batch?: {
    maxBatch: number;
    /**
     * Throughput over latency: the bus may hold messages back up to this long to hand over more at once (Kafka:
     * the broker answers a fetch once about 1 MiB is waiting or this time has passed). Unset: as soon as any arrive.
     */
    gatherMs?: number;
    handler(messages: ReceivedMessage[]): Promise<void>;
  };
}

export interface Subscription {
  close(): Promise<void>;
}

export interface EventBus {
  readonly kind: 'kafka' | 'memory';
  /**
   * Publishes and resolves only when every message is safe: with Kafka, acknowledged by all in-sync replicas
   * (acks=all); in process, handled by every consumer group with a member on its topic (a failed handler
   * rejects the publish, see `MemoryBroker`).
   */
  publish(messages: BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the bus can accept messages. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The versioned topics the platform uses. Adding one is a design change: record it in docs/architecture.md. */
export const TOPICS = {
  audit: 'audit.v1',
  usage: 'usage.v1',
  calls: 'mcp-calls.v1',
  catalog: 'catalog.v1',
  identity: 'identity.v1',
  notifications: 'notifications.v1',
} as const;
