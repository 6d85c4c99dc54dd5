import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { CompressionTypes, Kafka, logLevel, Partitioners, type Admin, type Consumer, type KafkaMessage, type Producer } from 'kafkajs';
import type { Logger } from '../logging/logger';
import { BusClosedError } from './errors';
import { installInlineGzip } from './kafka-gzip';
import { kafkaLogCreator } from './kafka-logging';
import { kafkaJsSecurity, type KafkaSasl, type KafkaTls } from './kafka-security';
import type { BusMessage, EventBus, ReceivedMessage, SubscribeOptions, Subscription } from './port';
import { backoffMs } from './wakeup';
import { eventHandlerConsecutiveFailures } from '../telemetry/metrics';
import { SLOW_STOP_MS } from '../lifecycle/modules';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** Prepended to every topic and consumer group name (isolates environments and tests on one cluster). */
  topicPrefix: string;
  logger: Logger;
  /** TLS to the brokers (KAFKA_SSL, KAFKA_SSL_CA_FILE); plaintext when absent. */
  tls?: KafkaTls;
  /** SASL authentication (KAFKA_SASL_*); none when absent. */
  sasl?: KafkaSasl;
  /** Partitions of topics this bus creates (default 3, so a group's members can share the work). */
  partitions?: number;
  /** Back-off before a message whose handler rejected is handled again (default 100 ms doubling to 5 s). */
  retryBackoff?: { initialMs: number; maxMs: number };
  /** How long `subscribe` waits for the consumer to join its group (default 60 s). */
  joinTimeoutMs?: number;
  /** A consumer's disconnect that takes longer is named in a warning (default SLOW_STOP_MS, 5 s). */
  slowDisconnectMs?: number;
}

/**
 * A publish whose values hold more than this many characters goes gzip-compressed (Kafka and every consumer decompress
 * it transparently). Batched call records repeat the same names and ids in every record and shrink five- to tenfold:
 * fewer bytes through the sockets of the producer, the broker and the consumers, for about 2 µs of compression per
 * record (kafka-gzip.ts). Small publishes (an outbox batch of a few events) are not worth it.
 */
export const COMPRESS_ABOVE_BYTES = 16 * 1024;

/** Thrown from a retry loop when its subscription closes, so the message is left uncommitted. */
class SubscriptionClosing extends Error {
  constructor() {
    super('subscription closing');
    this.name = 'SubscriptionClosing';
  }
}

/** The broker's refusals of a commit from a consumer that is no longer a member of its group's current generation. */
const MEMBERSHIP_LOST = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS']);

/**
 * The broker's own error when a commit was refused because the group moved on without this consumer (a handler that
 * outlived the session, 10 s, and got the member evicted). kafkajs wraps it in a non-retriable error, which stops the
 * consumer for good; its run loop rejoins the group (and the message comes again) only when it sees the broker's error.
 */
function membershipLost(error: unknown): Error | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const type = (cause as { type?: unknown } | null)?.type;
  return cause instanceof Error && typeof type === 'string' && MEMBERSHIP_LOST.has(type) ? cause : undefined;
}

/** What a consumer that gathers (`batch.gatherMs`) asks the broker to wait for before answering a fetch. */
const GATHER_MIN_BYTES = 1024 * 1024;

/**
 * Kafka behind the bus port (no kafkajs type crosses it). The producer is idempotent with one request in
 * flight and waits for all in-sync replicas. Each `subscribe` is one consumer in the prefixed group; it
 * commits a message's offset only once the handler has resolved and retries a rejected message in place,
 * after a back-off, until it succeeds or the subscription closes.
 */
export function createKafkaBus(options: KafkaBusOptions): EventBus {
  installInlineGzip();
  const logger = options.logger;
  const retry = options.retryBackoff ?? { initialMs: 100, maxMs: 5_000 };
  // One client, so the producer, every consumer and the admin connect with the same TLS and SASL.
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    ...kafkaJsSecurity(options.tls, options.sasl),
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger),
    retry: { retries: 5, initialRetryTime: 200 },
  });
  const full = (name: string) => `${options.topicPrefix}${name}`;
  const known = new Set<string>();
  const consumers = new Set<() => Promise<void>>();
  let closed = false;

  let adminReady: Promise<Admin> | undefined;
  const admin = () =>
    (adminReady ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      adminReady = undefined;
      throw error;
    }));

  let producerReady: Promise<Producer> | undefined;
  const producer = () =>
    (producerReady ??= (async () => {
      const client = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: true,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      producerReady = undefined;
      throw error;
    }));

  /** Creates missing topics; "already exists" (including a concurrent creation) is success. */
  async function ensureTopics(topics: string[]): Promise<void> {
    const missing = [...new Set(topics)].filter((t) => !known.has(t));
    if (missing.length === 0) return;
    try {
      await (await admin()).createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: options.partitions ?? 3 })),
      });
    } catch (error) {
      if (!onlyAlreadyExists(error)) throw error;
    }
    for (const topic of missing) known.add(topic);
  }

  async function subscribe(subscription: SubscribeOptions): Promise<Subscription> {
    if (closed) throw new BusClosedError();
    const topics = subscription.topics.map(full);
    const logical = new Map(subscription.topics.map((t) => [full(t), t]));
    await ensureTopics(topics);
    const consumer: Consumer = kafka.consumer({
      groupId: full(subscription.groupId),
      allowAutoTopicCreation: true,
      // Short timeouts keep group joins and rebalances quick; heartbeats are also sent while retrying.
      sessionTimeout: 10_000,
      rebalanceTimeout: 10_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: subscription.batch?.gatherMs ?? 500,
      ...(subscription.batch?.gatherMs ? { minBytes: GATHER_MIN_BYTES } : {}),
    });
    let stopping = false;
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`consumer group ${subscription.groupId} did not join within the timeout`)),
        options.joinTimeoutMs ?? 60_000,
      );
      const remove = consumer.on(consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        remove();
        resolve();
      });
    });
    consumer.on(consumer.events.CRASH, (event) =>
      logger.error({ err: event.payload.error, groupId: subscription.groupId }, 'kafka consumer crashed'),
    );

    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: subscription.fromBeginning ?? true });
    // Handlers run in the root trace context: a consumer continues the trace carried by the message headers.
    const failureLabels = (where: { topic: string; partition: number }) => ({
      group: subscription.groupId,
      topic: logical.get(where.topic) ?? where.topic,
      partition: String(where.partition),
    });
    /** Runs `handle` until it resolves (retrying in place with back-off), then commits past `last`. */
    const handleInPlace = async (
      where: { topic: string; partition: number; offset: string },
      heartbeat: () => Promise<void>,
      handle: () => Promise<void>,
      last: string,
    ) => {
      let failures = 0;
      for (;;) {
        if (stopping) throw new SubscriptionClosing();
        try {
          await handle();
          break;
        } catch (error) {
          failures += 1;
          eventHandlerConsecutiveFailures.set(failureLabels(where), failures);
          logger.warn(
            { err: error, topic: logical.get(where.topic) ?? where.topic, partition: where.partition, offset: where.offset, failures },
            'event handler failed; the message will be delivered again',
          );
          await sleep(backoffMs(failures, retry.initialMs, retry.maxMs));
          await heartbeat().catch(() => undefined);
        }
      }
      if (failures > 0) eventHandlerConsecutiveFailures.set(failureLabels(where), 0);
      await consumer
        .commitOffsets([{ topic: where.topic, partition: where.partition, offset: (BigInt(last) + 1n).toString() }])
        .catch((error: unknown) => {
          throw membershipLost(error) ?? error;
        });
    };
    const receivedOf = (topic: string, partition: number, message: KafkaMessage): ReceivedMessage => ({
      topic: logical.get(topic) ?? topic,
      key: message.key ? message.key.toString() : null,
      value: message.value ? message.value.toString() : '',
      headers: decodeHeaders(message.headers),
      partition,
      offset: message.offset,
    });
    const batch = subscription.batch;

    // Handlers run in the root trace context: a consumer continues the trace carried by the message headers.
    await context.with(ROOT_CONTEXT, () =>
      batch
        ? consumer.run({
            autoCommit: false,
            eachBatchAutoResolve: false,
            eachBatch: async ({ batch: fetched, resolveOffset, heartbeat }) => {
              const { topic, partition } = fetched;
              for (let start = 0; start < fetched.messages.length; start += batch.maxBatch) {
                const chunk = fetched.messages.slice(start, start + batch.maxBatch);
                const last = chunk[chunk.length - 1]!.offset;
                const received = chunk.map((message) => receivedOf(topic, partition, message));
                await handleInPlace({ topic, partition, offset: chunk[0]!.offset }, heartbeat, () => batch.handler(received), last);
                resolveOffset(last);
                await heartbeat();
              }
            },
          })
        : consumer.run({
            autoCommit: false,
            eachMessage: async ({ topic, partition, message, heartbeat }) => {
              const received = receivedOf(topic, partition, message);
              await handleInPlace({ topic, partition, offset: message.offset }, heartbeat, () => subscription.handler(received), message.offset);
            },
          }),
    );

    let disconnected: Promise<void> | undefined;
    const close = () =>
      (disconnected ??= (async () => {
        stopping = true;
        const started = performance.now();
        // kafkajs waits for the fetch and the handler in flight, and for a back-off or a group rejoin under way.
        await consumer.disconnect();
        const ms = Math.round(performance.now() - started);
        if (ms > (options.slowDisconnectMs ?? SLOW_STOP_MS)) logger.warn({ groupId: subscription.groupId, ms }, 'kafka consumer was slow to disconnect');
        consumers.delete(close);
      })());
    consumers.add(close);
    try {
      await joined;
    } catch (error) {
      await close();
      throw error;
    }
    return { close };
  }

  return {
    kind: 'kafka',

    async publish(messages: BusMessage[]) {
      if (closed) throw new BusClosedError();
      if (messages.length === 0) return;
      const byTopic = new Map<string, BusMessage[]>();
      let bytes = 0;
      for (const message of messages) {
        const topic = full(message.topic);
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), message]);
        bytes += message.value.length;
      }
      await ensureTopics([...byTopic.keys()]);
      await (await producer()).sendBatch({
        acks: -1,
        ...(bytes > COMPRESS_ABOVE_BYTES ? { compression: CompressionTypes.GZIP } : {}),
        topicMessages: [...byTopic].map(([topic, batch]) => ({
          topic,
          messages: batch.map((m) => ({ key: m.key ?? null, value: m.value, headers: m.headers })),
        })),
      });
    },

    subscribe,

    async ping() {
      if (closed) throw new BusClosedError();
      await (await admin()).describeCluster();
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...consumers].map((close) => close()));
      const [producerClient, adminClient] = await Promise.all([
        producerReady?.catch(() => undefined),
        adminReady?.catch(() => undefined),
      ]);
      await Promise.all([producerClient?.disconnect(), adminClient?.disconnect()]);
    },
  };
}

function decodeHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first !== null) decoded[name] = first.toString();
  }
  return decoded;
}

/** kafkajs reports an existing topic either as a `false` result or as TOPIC_ALREADY_EXISTS errors. */
function onlyAlreadyExists(error: unknown): boolean {
  const nested = (error as { errors?: unknown[] } | null)?.errors;
  const all = Array.isArray(nested) && nested.length > 0 ? nested : [error];
  return all.every((e) => (e as { type?: unknown } | null)?.type === 'TOPIC_ALREADY_EXISTS');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
