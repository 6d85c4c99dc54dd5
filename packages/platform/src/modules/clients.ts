import { createServiceClients, serviceAddressVariable, type RunningModule, type ServiceName } from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * gRPC clients of every service. A service hosted by this process is called through its gRPC server's local
 * channel (the same handlers, protobuf messages, metadata, deadlines and statuses, without HTTP/2 over loopback;
 * docs/architecture.md, One process); any other needs `<NAME>_SERVICE_ADDR`, and calling it without one fails
 * with a message naming the variable. An explicit `<NAME>_SERVICE_ADDR` always wins.
 */
export function clientsModule(ctx: PlatformContext): RunningModule {
  // Hosted by this process and not pointed elsewhere by an explicit address.
  const reachedHere = (name: ServiceName) => !ctx.config.serviceAddresses[name] && (ctx.targets.includes('all') || ctx.targets.includes(name));
  const clients = createServiceClients({
    deadlineMs: ctx.config.grpc.deadlineMs,
    logger: ctx.logger,
    localChannel: (name) => (reachedHere(name) ? ctx.localGrpcServer?.localChannel() : undefined),
    resolveAddress(name) {
      const explicit = ctx.config.serviceAddresses[name];
      if (explicit) return explicit;
      if (reachedHere(name) && ctx.localGrpcAddress) return ctx.localGrpcAddress;
      throw new Error(`${serviceAddressVariable(name)} is not set: this process does not host the ${name} service`);
    },
  });
  return { value: clients, stop: () => clients.close() };
}
