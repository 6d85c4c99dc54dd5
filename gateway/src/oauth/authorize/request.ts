import type { OAuthClient } from '@platform/proto/gen/platform/identity/v1/oauth';
import { redirectUriRegistered } from '@platform/runtime';
import type { EdgeDeps } from '../../edge-deps';
import { slugOfResource } from '../resource';

/** §8: the authorize query, and `state`, have length limits. */
export const MAX_AUTHORIZE_QUERY = 8_000;
export const MAX_STATE = 1_000;
/** RFC 7636 §4.2: an S256 challenge is the base64url SHA-256 of the verifier, 43 characters without padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The authorize parameters a consent form carries back (others are ignored, like `scope`). */
export const AUTHORIZE_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'resource',
] as const;

/** A request whose client, redirect URI and every parameter were checked. */
export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  /** Whether the request named the redirect URI (else the client's only one): the token request must then repeat it. */
  redirectUriSent: boolean;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  slug: string;
  /** The authorize parameters as received (for the consent form and the sign-in return path). */
  params: ReadonlyMap<string, string>;
}

export type EstablishedRequest =
  /** Rule 6: before the client and redirect URI are established; an error page, never a redirect. */
  | { kind: 'page'; problem: string }
  /** Rule 7: a later problem, sent back to the client's redirect URI with state and iss. */
  | { kind: 'redirect_error'; redirectUri: string; state: string | undefined; error: string; description: string }
  | { kind: 'ok'; request: AuthorizeRequest };

/** The authorize parameters in query-string form, as the sign-in return path and the length rule see them. */
export function authorizeQuery(params: ReadonlyMap<string, string>): string {
  return new URLSearchParams([...params]).toString();
}

/**
 * Checks an authorize request in the order §4.1.1 sets: first what establishes the client and its redirect
 * URI (failures are pages), then every other parameter (failures redirect).
 */
export async function establishRequest(deps: EdgeDeps, params: ReadonlyMap<string, string>): Promise<EstablishedRequest> {
  const clientId = params.get('client_id');
  if (!clientId) return { kind: 'page', problem: 'The request names no client (client_id is missing).' };
  const resolved = await deps.clients.identity.resolveClient({ clientId });
  const client = resolved.client;
  if (!client) return { kind: 'page', problem: resolved.problem || 'The client is unknown.' };

  const sentRedirect = params.get('redirect_uri');
  let redirectUri: string;
  if (sentRedirect !== undefined) {
    // Identity's rule too (it checks again before issuing a code): exact, but a loopback URI may name any port.
    if (!redirectUriRegistered(client.redirectUris, sentRedirect)) {
      return { kind: 'page', problem: 'The redirect URI is not one the client registered.' };
    }
    redirectUri = sentRedirect;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!;
  } else {
    return { kind: 'page', problem: 'The request names no redirect URI (redirect_uri is missing).' };
  }

  const state = params.get('state');
  const fail = (error: string, description: string): EstablishedRequest => ({ kind: 'redirect_error', redirectUri, state, error, description });
  const responseType = params.get('response_type');
  if (responseType === undefined) return fail('invalid_request', 'response_type is missing');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  if (state !== undefined && state.length > MAX_STATE) return fail('invalid_request', `state is longer than ${MAX_STATE} characters`);
  const codeChallenge = params.get('code_challenge');
  if (codeChallenge === undefined) return fail('invalid_request', 'PKCE is required: code_challenge is missing');
  if (params.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(codeChallenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters');
  const resource = params.get('resource');
  if (resource === undefined) return fail('invalid_target', 'resource is missing; name the gateway ({APP_URL}/mcp/{slug})');
  const slug = slugOfResource(deps.settings.appUrl, resource);
  if (slug === null) return fail('invalid_target', 'resource is not a gateway of this server');

  return {
    kind: 'ok',
    request: { client, redirectUri, redirectUriSent: sentRedirect !== undefined, state, codeChallenge, resource: `${deps.settings.appUrl}/mcp/${slug}`, slug, params },
  };
}
