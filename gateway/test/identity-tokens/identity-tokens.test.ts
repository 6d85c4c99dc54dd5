import type { Client } from 'pg';
import { environmentSchema, IDENTITY_KEYS_CACHE_MAX_SECONDS, JWKS_MAX_AGE_SECONDS, type ServiceClients } from '@platform/runtime';
import { databaseOf, grpcClients, startTestPlatform, type TestPlatform } from '@platform/test';
import { KEY_ACTIVATION_DELAY_SECONDS, RETIRED_KEY_PUBLISHED_SECONDS } from '../../../services/identity/src/domain/identity-token-keys';
import { keysTtlMsOf } from '../../src/mcp/identity-keys';
import { createIdentityTokenSigner, IDENTITY_TOKEN_TTL_SECONDS, type IdentitySubject } from '../../src/mcp/identity-token';
import type { JWK } from '../../src/mcp/jose';

const loadJose = () => import('jose');

const subject = (serverUrl = 'https://tools.example.test/mcp'): IdentitySubject => ({
  person: { id: '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f', email: 'ada@example.test', displayName: 'Ada' },
  team: { id: '0b7c7d1e-3a52-4b8e-8f3e-1c2d3e4f5a6b', slug: 'research' },
  gateway: { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', slug: 'tools' },
  server: { id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', url: serverUrl, teamId: '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f' },
});

/**
 * Identity tokens for MCP servers: ES256 keys made and rotated by the identity service, published at the real
 * edge's /.well-known/jwks.json and verified there with jose's remote key set, as an upstream server would.
 * The edge remembers keys for IDENTITY_KEYS_CACHE_SECONDS; 0 here, so a rotation is visible at once. A successor
 * key is published before it signs (KEY_ACTIVATION_DELAY_SECONDS) and its predecessor stays published a day past
 * the switch (RETIRED_KEY_PUBLISHED_SECONDS).
 */
describe('identity tokens and /.well-known/jwks.json', () => {
  let platform: TestPlatform;
  let clients: ServiceClients;
  let db: Client;
  let appUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { IDENTITY_KEYS_CACHE_SECONDS: '0' } });
    clients = grpcClients(platform);
    db = await databaseOf(platform, { required: true });
    appUrl = platform.platform.context.config.env.APP_URL.replace(/\/$/, '');
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await db?.end();
    await platform?.stop();
  });

  const jwks = async () => {
    const response = await fetch(platform.url('/.well-known/jwks.json'));
    return { response, text: await response.text() };
  };
  const signer = () => createIdentityTokenSigner({ clients, settings: { appUrl, identityKeysCacheSeconds: 0 } });
  const verify = async (token: string, audience: string) => {
    const { createRemoteJWKSet, jwtVerify } = await loadJose();
    return jwtVerify(token, createRemoteJWKSet(new URL(platform.url('/.well-known/jwks.json'))), { issuer: appUrl, audience, algorithms: ['ES256'] });
  };
  const storedKeys = async () =>
    (await db.query<{ kid: string; retires_at: Date | null; private_jwk_sealed: string }>('SELECT kid, retires_at, private_jwk_sealed FROM identity.identity_token_keys ORDER BY created_at')).rows;

  it('creates exactly one first key when many callers ask at once', async () => {
    expect(await storedKeys()).toEqual([]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => clients.identity.getIdentitySigningKeys({})));
    const kids = new Set(answers.map((answer) => JSON.parse(answer.currentPrivateJwkJson).kid));
    expect(kids.size).toBe(1);
    expect((await storedKeys()).map((row) => row.kid)).toEqual([...kids]);
  });

  it('publishes public keys only, with kid, alg and use, cacheable for a few minutes, without authentication', async () => {
    const { response, text } = await jwks();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const { keys } = JSON.parse(text) as { keys: Record<string, string>[] };
    const current = JSON.parse((await clients.identity.getIdentitySigningKeys({})).currentPrivateJwkJson) as Record<string, string>;
    expect(keys).toEqual([{ kty: 'EC', crv: 'P-256', x: current.x, y: current.y, kid: current.kid, alg: 'ES256', use: 'sig' }]);
    // The private scalar appears neither in the key set nor, unsealed, in the database.
    expect(current.d).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(text).not.toContain(current.d);
    expect((await storedKeys())[0]!.private_jwk_sealed).not.toContain(current.d);
  });

  it('signs short-lived tokens that verify against the edge\'s key set, with the person, team and gateway claims', async () => {
    const tokens = signer();
    const token = await tokens.tokenFor(subject());
    const { payload, protectedHeader } = await verify(token, 'https://tools.example.test/mcp');
    const current = JSON.parse((await clients.identity.getIdentitySigningKeys({})).currentPrivateJwkJson) as { kid: string };
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: current.kid, typ: 'JWT' });
    expect(payload).toMatchObject({
      iss: appUrl,
      aud: 'https://tools.example.test/mcp',
      sub: subject().person.id,
      email: 'ada@example.test',
      name: 'Ada',
      team_id: subject().team.id,
      team_slug: 'research',
      gateway_id: subject().gateway.id,
      gateway_slug: 'tools',
      server_id: subject().server.id,
      server_team_id: subject().server.teamId,
    });
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);

    // Remembered for the same subject; another server gets its own token, which the first audience refuses.
    expect(await tokens.tokenFor(subject())).toBe(token);
    const other = await tokens.tokenFor(subject('https://other.example.test/mcp'));
    expect(other).not.toBe(token);
    await expect(verify(other, 'https://tools.example.test/mcp')).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });

  it('counts with the edge\'s longest key cache and the key set\'s max-age when it publishes keys ahead of use', () => {
    // The identity service cannot read an edge's settings: no edge may remember keys longer than it counts with.
    expect(environmentSchema.shape.IDENTITY_KEYS_CACHE_SECONDS.safeParse(String(IDENTITY_KEYS_CACHE_MAX_SECONDS)).success).toBe(true);
    expect(environmentSchema.shape.IDENTITY_KEYS_CACHE_SECONDS.safeParse(String(IDENTITY_KEYS_CACHE_MAX_SECONDS + 1)).success).toBe(false);
    expect(keysTtlMsOf({ identityKeysCacheSeconds: 3600 })).toBe(IDENTITY_KEYS_CACHE_MAX_SECONDS * 1000);
    expect(KEY_ACTIVATION_DELAY_SECONDS).toBeGreaterThan(IDENTITY_KEYS_CACHE_MAX_SECONDS + JWKS_MAX_AGE_SECONDS);
    // The last token of a rotated-out key is signed up to an edge's key cache after the switch and lives 5 minutes.
    expect(RETIRED_KEY_PUBLISHED_SECONDS).toBeGreaterThan(IDENTITY_KEYS_CACHE_MAX_SECONDS + IDENTITY_TOKEN_TTL_SECONDS + JWKS_MAX_AGE_SECONDS);
  });

  // Rotation, by moving every key's timestamps back as if time had passed (never by waiting).
  const timePasses = (seconds: number) =>
    db.query(
      `UPDATE identity.identity_token_keys
          SET created_at = created_at - make_interval(secs => $1), activates_at = activates_at - make_interval(secs => $1),
              retires_at = retires_at - make_interval(secs => $1)`,
      [seconds],
    );
  const signingKid = async () => (JSON.parse((await clients.identity.getIdentitySigningKeys({})).currentPrivateJwkJson) as { kid: string }).kid;
  const publishedKids = async () => (JSON.parse((await jwks()).text) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort();
  const kidOf = async (token: string) => (await verify(token, 'https://tools.example.test/mcp')).protectedHeader.kid;
  let before: string;
  let oldKid: string;
  let newKid: string;

  it('publishes a successor once the key has signed past its age, but keeps signing with the old key until the successor activates', async () => {
    before = await signer().tokenFor(subject());
    oldKid = (await storedKeys())[0]!.kid;
    // The first key signed from its creation.
    const [first] = (await db.query<{ created_at: Date; activates_at: Date }>('SELECT created_at, activates_at FROM identity.identity_token_keys')).rows;
    expect(first!.activates_at.getTime()).toBe(first!.created_at.getTime());
    // Past IDENTITY_TOKEN_KEY_ROTATION_DAYS (30 by default) of signing.
    await timePasses(31 * 24 * 3600);

    const answers = await Promise.all(Array.from({ length: 6 }, () => clients.identity.getIdentitySigningKeys({})));
    expect(new Set(answers.map((answer) => JSON.parse(answer.currentPrivateJwkJson).kid as string))).toEqual(new Set([oldKid]));
    const rows = (
      await db.query<{ kid: string; created_at: Date; activates_at: Date; retires_at: Date | null }>(
        'SELECT kid, created_at, activates_at, retires_at FROM identity.identity_token_keys ORDER BY created_at',
      )
    ).rows;
    expect(rows.map((row) => row.kid)).toEqual([oldKid, expect.any(String)]);
    const [old, next] = rows as [(typeof rows)[number], (typeof rows)[number]];
    newKid = next.kid;
    // Published now, signing once every key set cached without it has expired; the old key stays published a
    // day past that.
    expect(next.activates_at.getTime() - next.created_at.getTime()).toBe(KEY_ACTIVATION_DELAY_SECONDS * 1000);
    expect(next.retires_at).toBeNull();
    expect(old.retires_at!.getTime() - next.activates_at.getTime()).toBe(RETIRED_KEY_PUBLISHED_SECONDS * 1000);

    expect(await publishedKids()).toEqual([oldKid, newKid].sort());
    expect(await kidOf(await signer().tokenFor(subject()))).toBe(oldKid);
    // Two minutes before the activation: no further key, and the old one signs.
    await timePasses(KEY_ACTIVATION_DELAY_SECONDS - 120);
    expect(await signingKid()).toBe(oldKid);
    expect(await kidOf(await signer().tokenFor(subject()))).toBe(oldKid);
    expect((await storedKeys()).map((row) => row.kid)).toEqual([oldKid, newKid]);
  });

  it('signs with the successor from its activation, and its tokens verify against a key set fetched before the switch', async () => {
    const { createLocalJWKSet, jwtVerify } = await loadJose();
    const fetchedBefore = createLocalJWKSet(JSON.parse((await jwks()).text) as { keys: JWK[] });
    await timePasses(120);

    expect(await signingKid()).toBe(newKid);
    const after = await signer().tokenFor(subject());
    const { protectedHeader } = await jwtVerify(after, fetchedBefore, { issuer: appUrl, audience: 'https://tools.example.test/mcp', algorithms: ['ES256'] });
    expect(protectedHeader.kid).toBe(newKid);
    expect(await kidOf(after)).toBe(newKid);
    // Tokens of the old key still verify against the key set served now.
    expect(await kidOf(before)).toBe(oldKid);
    expect((await storedKeys()).map((row) => row.kid)).toEqual([oldKid, newKid]);
  });

  it('keeps the retired key published for a day past its successor\'s activation, then stops publishing it', async () => {
    await timePasses(RETIRED_KEY_PUBLISHED_SECONDS - 300);
    expect(await publishedKids()).toEqual([oldKid, newKid].sort());
    expect(await kidOf(before)).toBe(oldKid);

    await timePasses(300);
    expect(await publishedKids()).toEqual([newKid]);
    expect(await signingKid()).toBe(newKid);

    // No longer published, it is destroyed (its sealed private half with it) at the next rotation.
    expect((await storedKeys()).map((row) => row.kid)).toContain(oldKid);
    await timePasses(31 * 24 * 3600);
    await clients.identity.getIdentitySigningKeys({});
    const kept = (await storedKeys()).map((row) => row.kid);
    expect(kept).toHaveLength(2);
    expect(kept).toContain(newKid);
    expect(kept).not.toContain(oldKid);
  });
});
