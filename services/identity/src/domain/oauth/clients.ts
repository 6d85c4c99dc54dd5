import type { OAuthClient, ResolveClientRequest, ResolveClientResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { IdentityDeps } from '../../deps';
import { iso } from '../../store/mappers';
import { findLiveRegisteredClient, isTrustedClient } from '../../store/oauth-clients-store';
import { metadataDocumentsOf } from './metadata-document';
import { REGISTERED_CLIENT_ID } from './validation';

/**
 * Establishes a client (§4.1.2): a dynamic registration (`svccl_…`, unverified, never trusted, refused once
 * expired) or a client ID metadata document fetched from the https URL that is its id (verified; trusted when
 * on the platform admins' list). Anything else is a problem, shown on the error page and never redirected to.
 */
export async function establishClient(deps: IdentityDeps, clientId: string): Promise<ResolveClientResponse> {
  if (!clientId) return { problem: 'No client_id was given.' };
  if (clientId.startsWith('svccl_')) {
    const row = REGISTERED_CLIENT_ID.test(clientId) ? await findLiveRegisteredClient(deps.db, clientId) : null;
    if (!row) return { problem: 'The client is not registered, or its registration has expired.' };
    const client: OAuthClient = {
      clientId: row.id,
      clientName: row.client_name,
      clientUri: row.client_uri,
      logoUri: row.logo_uri,
      redirectUris: row.redirect_uris,
      verified: false,
      trusted: false,
      registeredAt: iso(row.registered_at),
    };
    return { client, problem: '' };
  }
  if (/^https:\/\//i.test(clientId)) {
    const result = await metadataDocumentsOf(deps).resolve(clientId);
    if (!result.client) return { problem: result.problem };
    // Read now, not cached: a change to the trusted list applies at once.
    const trusted = await isTrustedClient(deps.db, clientId);
    return { client: { ...result.client, verified: true, trusted }, problem: '' };
  }
  return { problem: 'The client_id must be a registered client id or the https URL of a client metadata document.' };
}

export function resolveClient(deps: IdentityDeps, request: ResolveClientRequest): Promise<ResolveClientResponse> {
  return establishClient(deps, request.clientId);
}
