import type { IdentitySigningKeys } from '@platform/proto/gen/platform/identity/v1/identity';
import { IDENTITY_KEYS_CACHE_MAX_SECONDS, JWKS_MAX_AGE_SECONDS } from '@platform/runtime';
import type { IdentityDeps } from '../deps';
import { deleteRetiredKeys, insertKey, listPublishedKeys, lockKeyRotation, retireNewestKey, type IdentityTokenKeyRow } from '../store/identity-token-keys-store';

export const IDENTITY_TOKEN_ALG = 'ES256';

/*
 * Key timing (docs/oauth.md, Identity tokens). A verifier that meets an unknown kid fetches the key set again, but
 * what it fetches may be old: an edge serves the key set it remembered (up to IDENTITY_KEYS_CACHE_SECONDS) and
 * HTTP caches keep the response for its max-age. So a new key is published first and signs only once no cached
 * key set can still lack it, and a rotated-out key stays published well after the last token it signed expires.
 * The identity service cannot see each edge's setting, so it counts with the most the configuration admits.
 */

/** For clock differences between replicas and a request in flight at the boundary. */
const KEY_TIMING_MARGIN_SECONDS = 60;
/** The longest a key set may be cached anywhere between the identity service and a verifier (15 minutes). */
export const KEY_SET_CACHE_MAX_SECONDS = IDENTITY_KEYS_CACHE_MAX_SECONDS + JWKS_MAX_AGE_SECONDS;
/**
 * How long a new key (other than the very first) is published before it signs: 16 minutes. Until then the
 * previous key keeps signing; rotation is due only after IDENTITY_TOKEN_KEY_ROTATION_DAYS, so this barely matters.
 */
export const KEY_ACTIVATION_DELAY_SECONDS = KEY_SET_CACHE_MAX_SECONDS + KEY_TIMING_MARGIN_SECONDS;
/**
 * How long a rotated-out public key stays published, counted from its successor's activation. The last token it
 * signs is signed at most an edge's key cache after that and lives 5 minutes, so it needs about 15 minutes; a day
 * is far more.
 */
export const RETIRED_KEY_PUBLISHED_SECONDS = 24 * 3600;

// jose is ESM-only and this package is CommonJS: loaded with import() (cached by the loader after the first call).
const loadJose = () => import('jose');

/**
 * The identity-token keys (docs/oauth.md, Identity tokens): the private key to sign with now and every public key
 * published, including a new key not signing yet. The first key is made on demand and signs at once; once the
 * signing key has signed for IDENTITY_TOKEN_KEY_ROTATION_DAYS a successor is made, published at once and signing
 * KEY_ACTIVATION_DELAY_SECONDS later. Replicas asking at once create one key: creation runs under a
 * transaction-scoped advisory lock and re-checks, and a unique index admits one newest key.
 */
export async function getIdentitySigningKeys(deps: IdentityDeps): Promise<IdentitySigningKeys> {
  const rotationDays = deps.config.env.IDENTITY_TOKEN_KEY_ROTATION_DAYS;
  let rows = await listPublishedKeys(deps.db, rotationDays);
  if (needsNewKey(rows)) rows = await rotateIdentitySigningKey(deps, { onlyWhenDue: true });
  return answerOf(deps, rows);
}

/** No key yet, or the newest one has signed long enough (a successor waiting for its activation is not due). */
function needsNewKey(rows: readonly IdentityTokenKeyRow[]): boolean {
  const newest = rows.find((row) => row.retires_at === null);
  return !newest || newest.due;
}

/**
 * The key that signs now: the one activated last (rows come latest activation first). Every key stays published
 * a day past its successor's activation, so there is one; were there none (keys edited by hand), the key
 * activating first signs rather than none.
 */
function signingKeyOf(rows: readonly IdentityTokenKeyRow[]): IdentityTokenKeyRow {
  return rows.find((row) => row.active) ?? rows[rows.length - 1]!;
}

/**
 * Makes a new newest key and retires the previous one. The new key signs KEY_ACTIVATION_DELAY_SECONDS from now
 * (at once when no key is published: no key set without it was ever served); the previous one stays published
 * RETIRED_KEY_PUBLISHED_SECONDS past that. With `onlyWhenDue`, does so only when, under the lock, there is still no
 * key or the newest is still due (another replica may just have rotated). Keys no longer published are destroyed
 * first. Returns the published keys afterwards.
 */
export async function rotateIdentitySigningKey(deps: IdentityDeps, options: { onlyWhenDue?: boolean } = {}): Promise<IdentityTokenKeyRow[]> {
  const rotationDays = deps.config.env.IDENTITY_TOKEN_KEY_ROTATION_DAYS;
  return deps.db.transaction(async (tx) => {
    await lockKeyRotation(tx);
    await deleteRetiredKeys(tx);
    const published = await listPublishedKeys(tx, rotationDays);
    if (options.onlyWhenDue && !needsNewKey(published)) return published;
    const { generateKeyPair, exportJWK, calculateJwkThumbprint } = await loadJose();
    const { privateKey, publicKey } = await generateKeyPair(IDENTITY_TOKEN_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: IDENTITY_TOKEN_ALG, use: 'sig' };
    const activatesInSeconds = published.length === 0 ? 0 : KEY_ACTIVATION_DELAY_SECONDS;
    await retireNewestKey(tx, activatesInSeconds + RETIRED_KEY_PUBLISHED_SECONDS);
    await insertKey(tx, {
      kid,
      alg: IDENTITY_TOKEN_ALG,
      privateJwkSealed: deps.secrets.secretBox.encrypt(JSON.stringify(privateJwk), kid),
      publicJwk: { ...publicJwk, kid, alg: IDENTITY_TOKEN_ALG, use: 'sig' },
      activatesInSeconds,
    });
    deps.logger.info({ kid, activatesInSeconds }, 'identity-token signing key created');
    return listPublishedKeys(tx, rotationDays);
  });
}

function answerOf(deps: IdentityDeps, rows: readonly IdentityTokenKeyRow[]): IdentitySigningKeys {
  const signing = signingKeyOf(rows);
  return {
    currentPrivateJwkJson: deps.secrets.secretBox.decrypt(signing.private_jwk_sealed, signing.kid),
    publicJwksJson: rows.map((row) => JSON.stringify(row.public_jwk)),
  };
}
