import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { randomToken } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import type { NewTokenPair } from '../../store/oauth-grants-store';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS } from './limits';

export const ACCESS_TOKEN_PREFIX = 'svcat_';
export const REFRESH_TOKEN_PREFIX = 'svcrt_';

/** A new access + refresh pair (256 random bits each): the values for the client, only digests for the store. */
export function newTokenPair(deps: IdentityDeps, generation: number): { values: { access: string; refresh: string }; stored: NewTokenPair } {
  const access = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  const refresh = `${REFRESH_TOKEN_PREFIX}${randomToken(32)}`;
  return {
    values: { access, refresh },
    stored: {
      accessDigest: deps.secrets.digester.digest(access),
      refreshDigest: deps.secrets.digester.digest(refresh),
      generation,
      accessTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
      refreshTtlSeconds: REFRESH_TOKEN_TTL_SECONDS,
    },
  };
}

/** Whose grant the pair belongs to and for which gateway: the edge checks the person may still use it (docs/oauth.md). */
export interface GrantOwner {
  person_id: string;
  gateway_id: string;
  gateway_slug: string;
}

export function tokenResponse(values: { access: string; refresh: string }, grant: GrantOwner): TokenResponse {
  return {
    accessToken: values.access,
    refreshToken: values.refresh,
    expiresIn: ACCESS_TOKEN_TTL_SECONDS,
    tokenType: 'Bearer',
    personId: grant.person_id,
    gatewayId: grant.gateway_id,
    gatewaySlug: grant.gateway_slug,
  };
}
