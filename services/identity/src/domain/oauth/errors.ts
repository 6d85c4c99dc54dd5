import type { OAuthError } from '@platform/proto/gen/platform/identity/v1/oauth';

/** The RFC 6749 / 7591 / 8707 error values this server answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_target'
  | 'unsupported_grant_type'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata';

export function oauthError(error: OAuthErrorCode, description: string): OAuthError {
  return { error, errorDescription: description };
}

/**
 * Thrown inside a transaction to roll back what it claimed (a code, a refresh token) and answer with an OAuth
 * error: a request that fails a check must not burn the credential for its rightful holder.
 */
export class OAuthRefusal extends Error {
  readonly oauth: OAuthError;

  constructor(error: OAuthErrorCode, description: string) {
    super(description);
    this.name = 'OAuthRefusal';
    this.oauth = oauthError(error, description);
  }
}
