import type { ServiceDefinition as GrpcServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Cache } from '../cache/port';
import type { PlatformConfig, ServiceName } from '../config';
import type { Database, Transaction } from '../db/port';
import type { EventBus, ReceivedMessage } from '../bus/port';
import type { Logger } from '../logging';
import type { DomainEvent } from '../outbox';
import type { Secrets } from '../crypto';
import type { ServiceClients } from './clients';

/** What a service is given when it starts: the shared runtime, scoped to it. */
export interface ServiceContext {
  name: ServiceName;
  config: PlatformConfig;
  logger: Logger;
  db: Database;
  cache: Cache;
  bus: EventBus;
  secrets: Secrets;
  /** gRPC clients of the other services (and of itself), resolved lazily by address. */
  clients: ServiceClients;
}

/** An idempotent event consumer: the handler runs once per event id, inside the transaction marking it done. */
export interface EventConsumer {
  /** Consumer name; also the bus consumer group. Unique across the platform (prefix it with the service). */
  name: string;
  topics: string[];
  handle(event: DomainEvent<unknown>, tx: Transaction, message: ReceivedMessage): Promise<void>;
  /** Optional: many events per transaction (see `consumeEvents`' batch); `handle` then serves no delivery. */
  batch?: { maxBatch: number; gatherMs?: number; handle(events: DomainEvent<unknown>[], tx: Transaction): Promise<void> };
}

/** Long-running work of a service besides its API (schedulers, health checkers). */
export interface BackgroundTask {
  name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

/** What a service's event consumers are built from: they work inside the transaction they are given. */
export type ConsumerContext = Pick<ServiceContext, 'name' | 'logger'>;

export interface ServiceInstance {
  /** Async handlers of the service's gRPC API (see grpc/types.ts for the typed form). */
  handlers: UntypedServiceImplementation | object;
  background?: BackgroundTask[];
}

/**
 * How every service is declared, so every service folder has the same shape: `src/index.ts` exports one
 * `ServiceDefinition`; `src/grpc/` holds its handlers, `src/domain/` its logic, `src/store/` its SQL and
 * `migrations/`, `src/events/` its publishers and consumers.
 */
export interface ServiceDefinition {
  name: ServiceName;
  /** The generated grpc-js service definition and its full proto name (used by grpc.health.v1). */
  grpc: { definition: GrpcServiceDefinition; fullName: string };
  /** Folder of `NNNN_name.sql` migrations for the schema named after the service. */
  migrationsDir: string;
  create(context: ServiceContext): Promise<ServiceInstance> | ServiceInstance;
  /**
   * Its event consumers, apart from `create`: the `events` command builds them alone, without starting the service,
   * to replay the events they parked (docs/operations.md, Parked events).
   */
  consumers?(context: ConsumerContext): EventConsumer[];
}

export function defineService(definition: ServiceDefinition): ServiceDefinition {
  return definition;
}
