import type { ValidateAccessTokenRequest, ValidateAccessTokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import type { IdentityDeps } from '../../deps';
import { findValidAccessToken, touchConnection } from '../../store/oauth-grants-store';
import { ACCESS_TOKEN_PREFIX } from './token-pair';

/** last_used_at is written at most this often per connection: one write a minute instead of one per request. */
const TOUCH_EVERY_SECONDS = 60;

const INVALID: ValidateAccessTokenResponse = {
  valid: false,
  personId: '',
  email: '',
  displayName: '',
  connectionId: '',
  gatewayId: '',
  clientId: '',
  clientName: '',
  clientVerified: false,
};

/**
 * The resource-server check of every /mcp/{slug} request (§5.5): a live access token of a live connection made
 * for this gateway, whose person is active. Whether the person may still use the gateway is the catalog's
 * question, asked by the edge.
 */
export async function validateAccessToken(deps: IdentityDeps, request: ValidateAccessTokenRequest): Promise<ValidateAccessTokenResponse> {
  if (!request.token.startsWith(ACCESS_TOKEN_PREFIX) || !request.gatewaySlug) return INVALID;
  const row = await findValidAccessToken(deps.db, deps.secrets.digester.digest(request.token), request.gatewaySlug, TOUCH_EVERY_SECONDS);
  if (!row) return INVALID;
  if (row.touch_due) await touchConnection(deps.db, row.connection_id, TOUCH_EVERY_SECONDS);
  return {
    valid: true,
    personId: row.person_id,
    email: row.email,
    displayName: row.display_name,
    connectionId: row.connection_id,
    gatewayId: row.gateway_id,
    clientId: row.client_id,
    clientName: row.client_name,
    clientVerified: row.client_verified,
    expiresAt: row.expires_at.toISOString(),
  };
}
