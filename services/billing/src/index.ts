import path from 'node:path';
import { defineService } from '@platform/runtime';
import { BillingServiceService } from '@platform/proto/gen/platform/billing/v1/billing';
import { createBillingServiceHandlers } from './grpc/handlers';

/** Model providers, models and usage accounting. */
export const billingService = defineService({
  name: 'billing',
  grpc: { definition: BillingServiceService, fullName: 'platform.billing.v1.BillingService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create: (context) => ({ handlers: createBillingServiceHandlers(context) }),
});
