import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { createRemembered } from '../auth/remembered';
import type { EdgeDeps } from '../edge-deps';

/** Thrown inside the remembered ask so that a refusal is never remembered. */
class NoGatewayAccess extends Error {}

/**
 * Whether the person of a grant identity has just issued (a code exchanged, a refresh) may still use the grant's
 * gateway, asked as authorize (rule 8) and the /mcp check ask it (`CheckGatewayAccess`): a person removed from the
 * team, a disabled or deleted gateway, or a slug now naming another gateway (ids differ) all refuse. Identity cannot
 * ask the catalog itself, so the edge asks before it hands the tokens over. Allowed answers are remembered as the
 * /mcp check's are (AUTH_CACHE_SECONDS while the auth generation is unchanged; a removal or gateway change moves it),
 * so a client refreshing often costs no catalog call each time. Refusals are never remembered: access given back
 * is an additive change, which does not move the generation.
 */
export function createGrantAccessCheck(deps: EdgeDeps): (grant: TokenResponse) => Promise<boolean> {
  const remember = createRemembered<true>({
    ...(deps.settings.authCacheSeconds > 0 ? { cache: deps.cache } : {}),
    ttlMs: deps.settings.authCacheSeconds * 1000,
    expiresAt: () => undefined,
  });
  return async (grant) => {
    // Never a refusal (which would end the connection): identity broke its contract, so a 500 and nothing handed over.
    if (!grant.personId || !grant.gatewaySlug || !grant.gatewayId) throw new Error('The identity service named no person or gateway for the grant');
    try {
      await remember(grant.personId, `grant-access\n${grant.gatewaySlug}\n${grant.gatewayId}`, async () => {
        const access = await deps.clients.catalog.checkGatewayAccess({ slug: grant.gatewaySlug, personId: grant.personId });
        if (!access.allowed || access.gateway?.id !== grant.gatewayId) throw new NoGatewayAccess();
        return true;
      });
      return true;
    } catch (error) {
      if (error instanceof NoGatewayAccess) return false;
      throw error;
    }
  };
}
