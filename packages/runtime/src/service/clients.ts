import { AgentsServiceClient } from '@platform/proto/gen/platform/agents/v1/agents';
import { BillingServiceClient } from '@platform/proto/gen/platform/billing/v1/billing';
import { CatalogServiceClient } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { IdentityServiceClient } from '@platform/proto/gen/platform/identity/v1/identity';
import { KnowledgeServiceClient } from '@platform/proto/gen/platform/knowledge/v1/knowledge';
import { NotificationsServiceClient } from '@platform/proto/gen/platform/notifications/v1/notifications';
import type { ServiceName } from '../config';
import { createGrpcClient, readMethodsOf, type AsyncClient, type UnaryChannel } from '../grpc';
import type { Logger } from '../logging';

/** Each service's generated client and the proto name it reports health under. */
const SERVICE_CLIENTS = {
  identity: { constructor: IdentityServiceClient, fullName: 'platform.identity.v1.IdentityService' },
  catalog: { constructor: CatalogServiceClient, fullName: 'platform.catalog.v1.CatalogService' },
  agents: { constructor: AgentsServiceClient, fullName: 'platform.agents.v1.AgentsService' },
  knowledge: { constructor: KnowledgeServiceClient, fullName: 'platform.knowledge.v1.KnowledgeService' },
  billing: { constructor: BillingServiceClient, fullName: 'platform.billing.v1.BillingService' },
  notifications: { constructor: NotificationsServiceClient, fullName: 'platform.notifications.v1.NotificationsService' },
} as const;

type ClientOf<N extends ServiceName> = AsyncClient<InstanceType<(typeof SERVICE_CLIENTS)[N]['constructor']>>;

export type ServiceClients = { readonly [N in ServiceName]: ClientOf<N> } & {
  /** The address a service is reached at (resolved now). */
  addressOf(name: ServiceName): string;
  /** The proto full name a service reports health under. */
  healthName(name: ServiceName): string;
  close(): Promise<void>;
};

/**
 * Clients of every service, each created on first use so that a process only connects to what it calls and
 * a service hosted in this process can be resolved once its gRPC server listens. `localChannel` names the
 * services this process hosts and reaches without a socket; the others are called at `resolveAddress`.
 */
export function createServiceClients(options: {
  resolveAddress(name: ServiceName): string;
  localChannel?(name: ServiceName): UnaryChannel | undefined;
  deadlineMs: number;
  logger: Logger;
}): ServiceClients {
  const created = new Map<ServiceName, { close(): void }>();
  const clientFor = <N extends ServiceName>(name: N): ClientOf<N> => {
    let client = created.get(name);
    if (!client) {
      const spec = SERVICE_CLIENTS[name];
      client = createGrpcClient(spec.constructor, options.localChannel?.(name) ?? options.resolveAddress(name), {
        deadlineMs: options.deadlineMs,
        // Reads are retried when a service is briefly unavailable; changes never are.
        idempotentMethods: readMethodsOf(spec.constructor.service) as never[],
        logger: options.logger,
      }) as unknown as { close(): void };
      created.set(name, client);
    }
    return client as unknown as ClientOf<N>;
  };
  return {
    get identity() {
      return clientFor('identity');
    },
    get catalog() {
      return clientFor('catalog');
    },
    get agents() {
      return clientFor('agents');
    },
    get knowledge() {
      return clientFor('knowledge');
    },
    get billing() {
      return clientFor('billing');
    },
    get notifications() {
      return clientFor('notifications');
    },
    addressOf: (name) => options.resolveAddress(name),
    healthName: (name) => SERVICE_CLIENTS[name].fullName,
    async close() {
      for (const client of created.values()) client.close();
      created.clear();
    },
  };
}
