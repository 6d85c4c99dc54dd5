import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { AgentsServiceServer } from '@platform/proto/gen/platform/agents/v1/agents';

/** gRPC handlers of the agents service: they translate messages to domain calls and back, nothing more. */
export function createAgentsServiceHandlers(context: ServiceContext): AsyncServiceImplementation<AgentsServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('agents', context.db),
  };
}
