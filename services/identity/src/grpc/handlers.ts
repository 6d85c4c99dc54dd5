import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { IdentityServiceServer } from '@platform/proto/gen/platform/identity/v1/identity';

/** gRPC handlers of the identity service: they translate messages to domain calls and back, nothing more. */
export function createIdentityServiceHandlers(context: ServiceContext): AsyncServiceImplementation<IdentityServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('identity', context.db),
  };
}
