import { createServiceClients, serviceAddressVariable, type RunningModule, type ServiceName } from '@platform/runtime';
import type { PlatformContext } from '../context';

/**
 * gRPC clients of every service. A service hosted by this process is called through its gRPC server's local
 * channel (the same handlers, protobuf messages, metadata, deadlines and statuses, without HTTP/2 over loopback;
 * docs/architecture.md, One process); any other needs `<NAME>_SERVICE_ADDR`, and calling it without one fails
 * with a message naming the variable. An explicit `<NAME>_SERVICE_ADDR` always wins.
 */
export function clientsModule(ctx: PlatformContext): RunningModule {
  const hostedHere = (name: ServiceName) => ctx.targets.includes('all') || ctx.targets.includes(name);
  const clients = createServiceClients({
    deadlineMs: ctx.config.grpc.deadlineMs,
    logger: ctx.logger,
    localChannel(name) {
      if (ctx.config.serviceAddresses[name] || !hostedHere(name)) return undefined;
      return ctx.localGrpcServer?.localChannel();
    },
    resolveAddress(name) {
      const explicit = ctx.config.serviceAddresses[name];
      if (explicit) return explicit;
      if (hostedHere(name) && ctx.localGrpcAddress) return ctx.localGrpcAddress;
      throw new Error(`${serviceAddressVariable(name)} is not set: this process does not host the ${name} service`);
    },
  });
  return { value: clients, stop: () => clients.close() };
}
