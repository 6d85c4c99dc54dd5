import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { KnowledgeServiceServer } from '@platform/proto/gen/platform/knowledge/v1/knowledge';

/** gRPC handlers of the knowledge service: they translate messages to domain calls and back, nothing more. */
export function createKnowledgeServiceHandlers(context: ServiceContext): AsyncServiceImplementation<KnowledgeServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('knowledge', context.db),
  };
}
