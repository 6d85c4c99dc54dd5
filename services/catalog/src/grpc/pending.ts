import { AppError } from '@platform/runtime';
import type { CatalogHandlers } from './handlers';

// TEMPORARY while issue 5 is split between parallel work: each slice deletes its methods from here as it
// implements them in its own file. This file must be gone before the work is committed as done.
const notYet = (method: string) => async (): Promise<never> => {
  throw new AppError('internal', `${method} is not implemented yet`);
};

export function pendingHandlers(): CatalogHandlers<
  | 'updateGateway'
  | 'deleteGateway'
  | 'resolveGateway'
  | 'listAllMcpServers'
  | 'adminUpdateMcpServer'
  | 'publishMcpServer'
  | 'reviewMcpServer'
  | 'listCatalog'
  | 'approveCapability'
  | 'listCalls'
  | 'getCall'
> {
  return {
    updateGateway: notYet('updateGateway'),
    deleteGateway: notYet('deleteGateway'),
    resolveGateway: notYet('resolveGateway'),
    listAllMcpServers: notYet('listAllMcpServers'),
    adminUpdateMcpServer: notYet('adminUpdateMcpServer'),
    publishMcpServer: notYet('publishMcpServer'),
    reviewMcpServer: notYet('reviewMcpServer'),
    listCatalog: notYet('listCatalog'),
    approveCapability: notYet('approveCapability'),
    listCalls: notYet('listCalls'),
    getCall: notYet('getCall'),
  };
}
