/** The OAuth limits of §8, in one place. */
export const CODE_TTL_SECONDS = 60;
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** A rotated refresh token presented again within this many seconds gets another pair (immediate predecessor only). */
export const REFRESH_REPLAY_GRACE_SECONDS = 30;
/** A dynamic registration no code was ever issued for expires after this long. */
export const UNUSED_REGISTRATION_TTL_SECONDS = 30 * 24 * 3600;

export const METADATA_FETCH_TIMEOUT_MS = 5_000;
export const METADATA_MAX_BYTES = 16 * 1024;
export const METADATA_CACHE_MIN_SECONDS = 60;
export const METADATA_CACHE_MAX_SECONDS = 3600;
export const METADATA_CACHE_DEFAULT_SECONDS = 600;

/** Registration limits the spec leaves open (documented in docs/oauth.md, Token, register, revoke). */
export const MAX_CLIENT_NAME = 200;
export const MAX_REDIRECT_URIS = 20;
export const MAX_URI_LENGTH = 2048;
export const MAX_REGISTRATION_BYTES = 64 * 1024;
// MAX_TRUSTED_CLIENTS is in @platform/runtime: the edge checks the same limit.
