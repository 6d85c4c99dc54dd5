import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { createRemembered } from '../auth/remembered';
import type { EdgeDeps } from '../edge-deps';

/** Thrown inside the remembered ask so that a refusal is never remembered. */
class NoGatewayAccess extends Error {}

/**
 * Identity answered a grant without its person or gateway, which an identity service of the version before it named
 * them does (during a rolling upgrade). The grant cannot be checked, so nothing is handed over: the token endpoint
 * answers 503 (`token.ts`), and a retry succeeds once an identity of this version answers.
 */
export class GrantWithoutGateway extends Error {
  constructor() {
    super('The identity service named no person or gateway for the grant');
    this.name = 'GrantWithoutGateway';
  }
}

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
    // Never a refusal (which would end the connection): the grant is fine, identity only did not say whose it is.
    if (!grant.personId || !grant.gatewaySlug || !grant.gatewayId) throw new GrantWithoutGateway();
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
