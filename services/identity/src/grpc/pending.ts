import { AppError } from '@platform/runtime';
import type { AsyncServiceImplementation } from '@platform/runtime';
import type { IdentityServiceServer } from '@platform/proto/gen/platform/identity/v1/identity';

// TEMPORARY while issue 5 is split between parallel work: each slice deletes its methods from here as it
// implements them in its own file. This file must be gone before the work is committed as done.
const notYet = (method: string) => async (): Promise<never> => {
  throw new AppError('internal', `${method} is not implemented yet`);
};

export function pendingHandlers(): Pick<AsyncServiceImplementation<IdentityServiceServer>, 'setTeamPublishingOverride' | 'getIdentitySigningKeys'> {
  return {
    setTeamPublishingOverride: notYet('setTeamPublishingOverride'),
    getIdentitySigningKeys: notYet('getIdentitySigningKeys'),
  };
}
