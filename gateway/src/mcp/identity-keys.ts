import { IDENTITY_KEYS_CACHE_MAX_SECONDS, type ServiceClients } from '@platform/runtime';
import { loadJose, type JWK, type SigningKeyObject } from './jose';

/** The key identity tokens are signed with now. */
export interface SigningKey {
  kid: string;
  alg: string;
  key: SigningKeyObject;
}

/** The identity service's token keys as an edge remembers them. */
export interface IdentityKeys {
  signing: SigningKey;
  /** Public JWKs of the current and still-verifiable previous keys (never a private member). */
  publicJwks: JWK[];
}

export interface IdentityKeySource {
  /** The remembered keys, fetched again once older than the TTL. */
  get(): Promise<IdentityKeys>;
}

export const DEFAULT_KEYS_TTL_MS = 60_000;
/**
 * The edge's setting (IDENTITY_KEYS_CACHE_SECONDS), in ms, at most IDENTITY_KEYS_CACHE_MAX_SECONDS: the identity
 * service publishes a new key that long plus the key set's max-age before it signs (docs/oauth.md, Identity tokens),
 * so an edge must never remember keys longer, whatever its settings say.
 */
export function keysTtlMsOf(settings: { identityKeysCacheSeconds?: number | undefined }): number {
  const seconds = settings.identityKeysCacheSeconds;
  return seconds === undefined ? DEFAULT_KEYS_TTL_MS : Math.min(seconds, IDENTITY_KEYS_CACHE_MAX_SECONDS) * 1000;
}

/** Members of an EC or OKP private JWK that must never be published. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export function publicOnly(jwk: JWK): JWK {
  const copy: Record<string, unknown> = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete copy[member];
  return copy as JWK;
}

async function fetchKeys(clients: ServiceClients): Promise<IdentityKeys> {
  const answer = await clients.identity.getIdentitySigningKeys({});
  const privateJwk = JSON.parse(answer.currentPrivateJwkJson) as JWK;
  if (!privateJwk.kid || !privateJwk.alg) throw new Error('identity signing key without kid or alg');
  const { importJWK } = await loadJose();
  const key = await importJWK(privateJwk, privateJwk.alg);
  return {
    signing: { kid: privateJwk.kid, alg: privateJwk.alg, key },
    publicJwks: answer.publicJwksJson.map((json) => publicOnly(JSON.parse(json) as JWK)),
  };
}

/**
 * Remembers the identity service's keys for `ttlMs` (rotation is days apart, so a minute-old answer is fine: a new
 * key is published well before the identity service makes it the signing key, and the previous key stays published
 * a day after, so signing with either while the answer is remembered verifies). One
 * fetch at a time; when a refresh fails the previous keys keep serving (identity being briefly away must not
 * stop upstream calls), and only a first fetch that fails is an error.
 */
export function createIdentityKeySource(clients: ServiceClients, ttlMs = DEFAULT_KEYS_TTL_MS): IdentityKeySource {
  let remembered: { keys: IdentityKeys; fetchedAt: number } | null = null;
  let inFlight: Promise<IdentityKeys> | null = null;

  const refresh = (): Promise<IdentityKeys> => {
    inFlight ??= fetchKeys(clients)
      .then((keys) => {
        remembered = { keys, fetchedAt: Date.now() };
        return keys;
      })
      .catch((error: unknown) => {
        if (remembered) return remembered.keys;
        throw error;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  return {
    get() {
      if (remembered && Date.now() - remembered.fetchedAt < ttlMs) return Promise.resolve(remembered.keys);
      return refresh();
    },
  };
}

/** One key source per edge (per set of service clients), shared by the JWKS route and the token signer. */
const sources = new WeakMap<ServiceClients, IdentityKeySource>();

export function identityKeySourceOf(clients: ServiceClients, ttlMs = DEFAULT_KEYS_TTL_MS): IdentityKeySource {
  let source = sources.get(clients);
  if (!source) {
    source = createIdentityKeySource(clients, ttlMs);
    sources.set(clients, source);
  }
  return source;
}
