import path from 'node:path';
import { defineService } from '@platform/runtime';
import { KnowledgeServiceService } from '@platform/proto/gen/platform/knowledge/v1/knowledge';
import { createKnowledgeServiceHandlers } from './grpc/handlers';

/** Data sources, documents, crawls and retrieval. */
export const knowledgeService = defineService({
  name: 'knowledge',
  grpc: { definition: KnowledgeServiceService, fullName: 'platform.knowledge.v1.KnowledgeService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create: (context) => ({ handlers: createKnowledgeServiceHandlers(context) }),
});
