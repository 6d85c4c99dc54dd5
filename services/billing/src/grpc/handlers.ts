import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { BillingServiceServer } from '@platform/proto/gen/platform/billing/v1/billing';

/** gRPC handlers of the billing service: they translate messages to domain calls and back, nothing more. */
export function createBillingServiceHandlers(context: ServiceContext): AsyncServiceImplementation<BillingServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('billing', context.db),
  };
}
