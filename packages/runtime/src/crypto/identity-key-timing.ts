/*
 * How long the identity-token key set may be cached between the identity service and a verifier (docs/oauth.md,
 * Identity tokens). The edge remembers keys and serves /.well-known/jwks.json with a max-age; the identity service
 * publishes a new key that much ahead of signing with it. One place for both sides, so they cannot drift apart.
 */

/** The longest an edge remembers the keys: the most IDENTITY_KEYS_CACHE_SECONDS admits. */
export const IDENTITY_KEYS_CACHE_MAX_SECONDS = 600;
/** The Cache-Control max-age of /.well-known/jwks.json. */
export const JWKS_MAX_AGE_SECONDS = 300;
