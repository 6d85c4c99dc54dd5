import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { CatalogServiceServer } from '@platform/proto/gen/platform/catalog/v1/catalog';

/** gRPC handlers of the catalog service: they translate messages to domain calls and back, nothing more. */
export function createCatalogServiceHandlers(context: ServiceContext): AsyncServiceImplementation<CatalogServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('catalog', context.db),
  };
}
