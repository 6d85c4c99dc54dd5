import type { IssueAuthorizationCodeRequest, IssueAuthorizationCodeResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { AppError, auditContext, randomToken, redirectUriRegistered, type FieldError } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import { findPersonById } from '../../store/people-store';
import { consentRemembered, markRegisteredClientUsed, rememberConsent } from '../../store/oauth-clients-store';
import { insertCode } from '../../store/oauth-grants-store';
import { gatewayParent, writeOAuthAudit } from './audit';
import { establishClient } from './clients';
import { CODE_TTL_SECONDS } from './limits';
import { S256_CHALLENGE, UUID } from './validation';

const CONSENTS = ['remembered', 'allowed', 'trusted'] as const;
type Consent = (typeof CONSENTS)[number];

/** The edge validated the request already; the service checks again and does not trust a claim it can verify. */
function checkFields(request: IssueAuthorizationCodeRequest): Consent {
  const problems: FieldError[] = [];
  if (!request.clientId) problems.push({ field: 'clientId', problem: 'is required' });
  if (!request.redirectUri) problems.push({ field: 'redirectUri', problem: 'is required' });
  if (!S256_CHALLENGE.test(request.codeChallenge)) problems.push({ field: 'codeChallenge', problem: 'must be an S256 challenge (43 base64url characters)' });
  if (!request.resource) problems.push({ field: 'resource', problem: 'is required' });
  if (!UUID.test(request.gatewayId)) problems.push({ field: 'gatewayId', problem: 'must be a UUID' });
  if (!request.gatewaySlug) problems.push({ field: 'gatewaySlug', problem: 'is required' });
  if (!UUID.test(request.personId)) problems.push({ field: 'personId', problem: 'must be a UUID' });
  if (!(CONSENTS as readonly string[]).includes(request.consent)) problems.push({ field: 'consent', problem: `must be one of ${CONSENTS.join(', ')}` });
  if (problems.length > 0) throw AppError.invalid(`Invalid authorization code request: ${problems.map((p) => p.field).join(', ')}`, problems);
  return request.consent as Consent;
}

/**
 * Issues an authorization code (60 s, single use) bound to the client, redirect URI, PKCE challenge, resource,
 * gateway and person. Consent: "allowed" is remembered and audited (how=allowed); "trusted" is audited
 * (how=trusted) and not remembered, so removing a client from the trusted list brings the consent page back;
 * "remembered" must really be remembered and is not audited again. A dynamic registration becomes used.
 */
export async function issueAuthorizationCode(deps: IdentityDeps, request: IssueAuthorizationCodeRequest): Promise<IssueAuthorizationCodeResponse> {
  const consent = checkFields(request);
  const established = await establishClient(deps, request.clientId);
  const client = established.client;
  if (!client) throw AppError.invalid(established.problem, [{ field: 'clientId', problem: 'the client cannot be established' }]);
  if (!redirectUriRegistered(client.redirectUris, request.redirectUri)) {
    throw AppError.invalid('The redirect URI is not registered for this client', [{ field: 'redirectUri', problem: 'not registered for the client' }]);
  }
  if (consent === 'trusted' && !client.trusted) throw AppError.forbidden('The client is not on the trusted list');

  const code = randomToken(32);
  await deps.db.transaction(async (tx) => {
    const person = await findPersonById(tx, request.personId);
    if (!person || person.status !== 'active') throw AppError.forbidden('The person is not active');
    if (consent === 'remembered' && !(await consentRemembered(tx, request.personId, client.clientId, request.gatewayId))) {
      throw AppError.invalid('No consent is remembered for this client and gateway', [{ field: 'consent', problem: 'not remembered' }]);
    }
    if (consent === 'allowed') await rememberConsent(tx, request.personId, client.clientId, request.gatewayId);
    if (consent !== 'remembered') {
      await writeOAuthAudit(tx, {
        ...auditContext(request.context),
        action: 'oauth.consent',
        target: { type: 'oauth_client', id: client.clientId, label: client.clientName || client.clientId },
        parent: gatewayParent(request.gatewayId, request.gatewaySlug),
        metadata: { how: consent, clientId: client.clientId, clientName: client.clientName, clientVerified: client.verified, gatewayId: request.gatewayId },
      });
    }
    await insertCode(tx, {
      digest: deps.secrets.digester.digest(code),
      clientId: client.clientId,
      clientName: client.clientName,
      clientVerified: client.verified,
      redirectUri: request.redirectUri,
      redirectUriSent: request.redirectUriSent,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      gatewayId: request.gatewayId,
      gatewaySlug: request.gatewaySlug,
      personId: request.personId,
      ttlSeconds: CODE_TTL_SECONDS,
    });
    if (!client.verified) await markRegisteredClientUsed(tx, client.clientId);
  });
  return { code };
}
