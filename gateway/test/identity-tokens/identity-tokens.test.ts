import type { Client } from 'pg';
import type { ServiceClients } from '@platform/runtime';
import { databaseOf, grpcClients, startTestPlatform, type TestPlatform } from '@platform/test';
import { createIdentityTokenSigner, type IdentitySubject } from '../../src/mcp/identity-token';

const loadJose = () => import('jose');

const subject = (serverUrl = 'https://tools.example.test/mcp'): IdentitySubject => ({
  person: { id: '6f1c2a52-8d8e-4c1e-9d7a-3b2a1c0d9e8f', email: 'ada@example.test', displayName: 'Ada' },
  team: { id: '0b7c7d1e-3a52-4b8e-8f3e-1c2d3e4f5a6b', slug: 'research' },
  gateway: { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', slug: 'tools' },
  server: { id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', url: serverUrl },
});

/**
 * Identity tokens for MCP servers: ES256 keys made and rotated by the identity service, published at the real
 * edge's /.well-known/jwks.json and verified there with jose's remote key set, as an upstream server would.
 * The edge remembers keys for IDENTITY_KEYS_CACHE_SECONDS; 0 here, so a rotation is visible at once.
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
    });
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);

    // Remembered for the same subject; another server gets its own token, which the first audience refuses.
    expect(await tokens.tokenFor(subject())).toBe(token);
    const other = await tokens.tokenFor(subject('https://other.example.test/mcp'));
    expect(other).not.toBe(token);
    await expect(verify(other, 'https://tools.example.test/mcp')).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });

  it('rotates a key past its age once, keeps verifying tokens of the old key, and signs new ones with the new key', async () => {
    const before = await signer().tokenFor(subject());
    const [old] = await storedKeys();
    // Age the current key past IDENTITY_TOKEN_KEY_ROTATION_DAYS (30 by default).
    await db.query(`UPDATE identity.identity_token_keys SET created_at = now() - interval '31 days' WHERE retires_at IS NULL`);

    const answers = await Promise.all(Array.from({ length: 6 }, () => clients.identity.getIdentitySigningKeys({})));
    const kids = new Set(answers.map((answer) => JSON.parse(answer.currentPrivateJwkJson).kid as string));
    expect(kids.size).toBe(1);
    const [newKid] = [...kids];
    expect(newKid).not.toBe(old!.kid);
    const rows = await storedKeys();
    expect(rows.map((row) => row.kid)).toEqual([old!.kid, newKid]);
    // The old public key stays published for a day after rotation.
    const retiresIn = rows[0]!.retires_at!.getTime() - Date.now();
    expect(retiresIn).toBeGreaterThan(23 * 3600_000);
    expect(retiresIn).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    expect(rows[1]!.retires_at).toBeNull();

    const { keys } = JSON.parse((await jwks()).text) as { keys: { kid: string }[] };
    expect(keys.map((key) => key.kid).sort()).toEqual([old!.kid, newKid].sort());
    expect((await verify(before, 'https://tools.example.test/mcp')).protectedHeader.kid).toBe(old!.kid);
    const after = await signer().tokenFor(subject());
    expect((await verify(after, 'https://tools.example.test/mcp')).protectedHeader.kid).toBe(newKid);
  });

  it('stops publishing a retired key once its day is over', async () => {
    const [old] = await storedKeys();
    await db.query(`UPDATE identity.identity_token_keys SET retires_at = now() - interval '1 second' WHERE kid = $1`, [old!.kid]);
    const { keys } = JSON.parse((await jwks()).text) as { keys: { kid: string }[] };
    expect(keys.map((key) => key.kid)).not.toContain(old!.kid);
    expect(keys).toHaveLength(1);
  });
});
