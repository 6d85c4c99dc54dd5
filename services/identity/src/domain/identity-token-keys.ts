import type { IdentitySigningKeys } from '@platform/proto/gen/platform/identity/v1/identity';
import type { IdentityDeps } from '../deps';
import { insertKey, listPublishedKeys, lockKeyRotation, retireCurrentKey, type IdentityTokenKeyRow } from '../store/identity-token-keys-store';

export const IDENTITY_TOKEN_ALG = 'ES256';
/**
 * How long a rotated-out public key stays published. Identity tokens live 5 minutes and edges remember keys about
 * a minute, so a day is far more than any token signed with the old key can need.
 */
export const RETIRED_KEY_PUBLISHED_SECONDS = 24 * 3600;

// jose is ESM-only and this package is CommonJS: loaded with import() (cached by the loader after the first call).
const loadJose = () => import('jose');

/**
 * The identity-token keys (docs/oauth.md, Identity tokens): the current private key and every public key still
 * published. The first key is created on demand, and the current one is replaced once older than
 * IDENTITY_TOKEN_KEY_ROTATION_DAYS. Replicas asking at once create one key: creation runs under a
 * transaction-scoped advisory lock and re-checks, and a unique index admits one current key.
 */
export async function getIdentitySigningKeys(deps: IdentityDeps): Promise<IdentitySigningKeys> {
  const rotationDays = deps.config.env.IDENTITY_TOKEN_KEY_ROTATION_DAYS;
  let rows = await listPublishedKeys(deps.db, rotationDays);
  if (needsNewKey(rows)) rows = await rotateIdentitySigningKey(deps, { onlyWhenDue: true });
  return answerOf(deps, rows);
}

function needsNewKey(rows: readonly IdentityTokenKeyRow[]): boolean {
  const current = rows.find((row) => row.retires_at === null);
  return !current || current.due;
}

/**
 * Makes a new current key and retires the previous one (published a day more). With `onlyWhenDue`, does so only
 * when, under the lock, there is still no current key or it is still due (another replica may just have rotated).
 * Returns the published keys afterwards.
 */
export async function rotateIdentitySigningKey(deps: IdentityDeps, options: { onlyWhenDue?: boolean } = {}): Promise<IdentityTokenKeyRow[]> {
  const rotationDays = deps.config.env.IDENTITY_TOKEN_KEY_ROTATION_DAYS;
  return deps.db.transaction(async (tx) => {
    await lockKeyRotation(tx);
    if (options.onlyWhenDue && !needsNewKey(await listPublishedKeys(tx, rotationDays))) return listPublishedKeys(tx, rotationDays);
    const { generateKeyPair, exportJWK, calculateJwkThumbprint } = await loadJose();
    const { privateKey, publicKey } = await generateKeyPair(IDENTITY_TOKEN_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: IDENTITY_TOKEN_ALG, use: 'sig' };
    await retireCurrentKey(tx, RETIRED_KEY_PUBLISHED_SECONDS);
    await insertKey(tx, {
      kid,
      alg: IDENTITY_TOKEN_ALG,
      privateJwkSealed: deps.secrets.secretBox.encrypt(JSON.stringify(privateJwk), kid),
      publicJwk: { ...publicJwk, kid, alg: IDENTITY_TOKEN_ALG, use: 'sig' },
    });
    deps.logger.info({ kid }, 'identity-token signing key created');
    return listPublishedKeys(tx, rotationDays);
  });
}

function answerOf(deps: IdentityDeps, rows: readonly IdentityTokenKeyRow[]): IdentitySigningKeys {
  const current = rows.find((row) => row.retires_at === null)!;
  return {
    currentPrivateJwkJson: deps.secrets.secretBox.decrypt(current.private_jwk_sealed, current.kid),
    publicJwksJson: rows.map((row) => JSON.stringify(row.public_jwk)),
  };
}
