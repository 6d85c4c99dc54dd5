import type { ServiceDefinition, ServiceName } from '@platform/runtime';
import { agentsService } from '@platform/agents';
import { billingService } from '@platform/billing';
import { catalogService } from '@platform/catalog';
import { identityService } from '@platform/identity';
import { knowledgeService } from '@platform/knowledge';
import { notificationsService } from '@platform/notifications';

/** The service definitions the executable can host. */
export const SERVICES: Record<ServiceName, ServiceDefinition> = {
  identity: identityService,
  catalog: catalogService,
  agents: agentsService,
  knowledge: knowledgeService,
  billing: billingService,
  notifications: notificationsService,
};
