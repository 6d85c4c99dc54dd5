import path from 'node:path';
import { defineService } from '@platform/runtime';
import { AgentsServiceService } from '@platform/proto/gen/platform/agents/v1/agents';
import { createAgentsServiceHandlers } from './grpc/handlers';

/** Knowledge-grounded chat agents: draft and published configurations, public agents and their sessions. */
export const agentsService = defineService({
  name: 'agents',
  grpc: { definition: AgentsServiceService, fullName: 'platform.agents.v1.AgentsService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create: (context) => ({ handlers: createAgentsServiceHandlers(context) }),
});
