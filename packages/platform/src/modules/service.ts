import {
  consumeEvents,
  migrateService,
  OutboxRelay,
  type Cache,
  type Database,
  type EventBus,
  type GrpcServer,
  type ModuleDefinition,
  type Secrets,
  type ServiceClients,
  type ServiceDefinition,
  type Subscription,
} from '@platform/runtime';
import type { PlatformContext } from '../context';
import { consumerOptions } from './consumer-options';

/** What a running service module offers: its gRPC handlers to register and its outbox relay to start. */
export interface RunningService {
  register(server: GrpcServer): void;
  relay: OutboxRelay;
}

/**
 * Turns a service definition into a module: apply its migrations (under an advisory lock), build it, subscribe
 * its consumers and start its background tasks; its gRPC handlers are registered by the grpc-server module and
 * its outbox relay is started by the relays module, once every service of the process has subscribed its
 * consumers (with the in-process bus a publish is handed to the consumer groups present, see `MemoryBroker`).
 * Stopping reverses that (the relays module has stopped the relay first, letting it finish its batch).
 */
export function serviceModule(
  definition: ServiceDefinition,
  relations: Pick<ModuleDefinition<PlatformContext>, 'deps' | 'with'>,
): ModuleDefinition<PlatformContext> {
  return {
    ...relations,
    async start(ctx, running) {
      const logger = ctx.logger.child({ service: definition.name });
      const db = running.get<Database>('database');
      const bus = running.get<EventBus>('bus');
      await migrateService(db, { schema: definition.name, dir: definition.migrationsDir, logger });
      const instance = await definition.create({
        name: definition.name,
        config: ctx.config,
        logger,
        db,
        bus,
        cache: running.get<Cache>('cache'),
        secrets: running.get<Secrets>('secrets'),
        clients: running.get<ServiceClients>('clients'),
      });

      const relay = new OutboxRelay({ db, bus, schema: definition.name, logger, pollMs: ctx.config.env.OUTBOX_POLL_MS });
      const subscriptions: Subscription[] = [];
      for (const consumer of definition.consumers?.({ name: definition.name, logger }) ?? []) {
        subscriptions.push(await consumeEvents({ bus, db, schema: definition.name, ...consumerOptions(consumer), logger }));
      }
      for (const task of instance.background ?? []) await task.start();

      const value: RunningService = {
        register(server: GrpcServer) {
          server.addService(definition.grpc.definition, instance.handlers);
          server.setServing(definition.grpc.fullName, true);
        },
        relay,
      };
      return {
        value,
        async stop() {
          // The relay is normally stopped already (relays module); stopping it again is a no-op.
          await relay.stop();
          for (const task of [...(instance.background ?? [])].reverse()) await task.stop();
          for (const subscription of subscriptions) await subscription.close();
        },
      };
    },
  };
}
