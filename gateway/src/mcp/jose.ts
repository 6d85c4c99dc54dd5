/**
 * jose is ESM-only and this package is CommonJS: it is loaded with import() (the module loader caches it after the
 * first call), and its types are derived from that import instead of a type import.
 */
export const loadJose = () => import('jose');

type Jose = Awaited<ReturnType<typeof loadJose>>;
export type JWK = Parameters<Jose['importJWK']>[0];
export type SigningKeyObject = Parameters<Jose['SignJWT']['prototype']['sign']>[0];
