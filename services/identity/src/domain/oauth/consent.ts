import type { GetConsentRequest, GetConsentResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { IdentityDeps } from '../../deps';
import { consentRemembered } from '../../store/oauth-clients-store';
import { UUID } from './validation';

/** Whether the person already allowed this client at this gateway (then no consent page is shown). */
export async function getConsent(deps: IdentityDeps, request: GetConsentRequest): Promise<GetConsentResponse> {
  if (!UUID.test(request.personId) || !UUID.test(request.gatewayId) || !request.clientId) return { remembered: false };
  return { remembered: await consentRemembered(deps.db, request.personId, request.clientId, request.gatewayId) };
}
