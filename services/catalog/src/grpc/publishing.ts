import type { CatalogDeps } from '../deps';
import { approveCapability } from '../domain/approvals';
import { publishMcpServer, reviewMcpServer } from '../domain/publishing';
import type { CatalogHandlers } from './handlers';

/** Publishing and approvals; the rules live in domain/publishing.ts and domain/approvals.ts. */
export function publishingHandlers(deps: CatalogDeps): CatalogHandlers<'publishMcpServer' | 'reviewMcpServer' | 'approveCapability'> {
  return {
    publishMcpServer: (request) => publishMcpServer(deps, request),
    reviewMcpServer: (request) => reviewMcpServer(deps, request),
    approveCapability: (request) => approveCapability(deps, request),
  };
}
