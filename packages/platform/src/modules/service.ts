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

/**
 * Turns a service definition into a module: apply its migrations (under an advisory lock), build it, start its
 * outbox relay, consumers and background tasks; its gRPC handlers are registered by the grpc-server module.
 * Stopping reverses that, letting the relay finish its batch.
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
      relay.start();
      const subscriptions: Subscription[] = [];
      for (const consumer of instance.consumers ?? []) {
        subscriptions.push(
          await consumeEvents({
            bus,
            db,
            schema: definition.name,
            consumer: consumer.name,
            topics: consumer.topics,
            handler: consumer.handle,
            ...(consumer.batch ? { batch: batchDelivery(consumer.batch) } : {}),
            logger,
          }),
        );
      }
      for (const task of instance.background ?? []) await task.start();

      return {
        value: {
          register(server: GrpcServer) {
            server.addService(definition.grpc.definition, instance.handlers);
            server.setServing(definition.grpc.fullName, true);
          },
        },
        async stop() {
          for (const task of [...(instance.background ?? [])].reverse()) await task.stop();
          for (const subscription of subscriptions) await subscription.close();
          await relay.stop();
        },
      };
    },
  };
}

/** A consumer's batch options as `consumeEvents` takes them: the same delivery options, its `handle` as `handler`. */
function batchDelivery<B extends { handle: unknown }>({ handle, ...delivery }: B): Omit<B, 'handle'> & { handler: B['handle'] } {
  return { ...delivery, handler: handle };
}
