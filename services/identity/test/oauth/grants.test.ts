import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { ActorKind } from '@platform/proto/gen/platform/common/v1/common';
import { createCache, createLogger, readAuthGeneration, type Cache, type ServiceClients } from '@platform/runtime';
import { adminClient, createPerson, databaseOf, describeWith, eventually, grpcClients, pkcePair, startTestPlatform, type ApiClient, type TestPlatform } from '@platform/test';
import { auditEntries, gateway, PLATFORM_TEAM_ID } from './support';

const REDIRECT = 'http://127.0.0.1:33418/callback';

/**
 * The authorization server's state and rules over real gRPC: registration, codes, tokens, revocation, connections.
 * Moves clocks back with SQL, so it needs real Postgres (always there under CI; skipped on a laptop without it).
 */
describeWith('postgres', 'OAuth grants (identity service)', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let clients: ServiceClients;
  let db: Client;
  let appUrl: string;
  let person: { id: string; email: string };

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
    clients = grpcClients(platform, { deadlineMs: 5000 });
    db = await databaseOf(platform, { required: true });
    appUrl = platform.platform.context.config.env.APP_URL;
    person = await createPerson(admin, 'oauth-person');
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await clients?.close();
    await platform?.stop();
  });

  const identity = () => clients.identity;

  async function register(metadata: Record<string, unknown> = {}): Promise<{ client_id: string; client_name?: string; grant_types?: string[] }> {
    const response = await identity().registerClient({
      metadataJson: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Test Client', ...metadata }),
      clientIp: '203.0.113.9',
      requestId: `req-${randomUUID()}`,
    });
    expect(response.error).toBeUndefined();
    return JSON.parse(response.responseJson);
  }

  function userContext(personId: string) {
    return { requestId: `req-${randomUUID()}`, clientIp: '198.51.100.7', actor: { kind: ActorKind.ACTOR_KIND_USER, userId: personId, displayName: 'P', email: '', apiKeyName: '', serviceAccountId: '' }, viaKind: '', viaName: '' };
  }

  /** Registers a client (unless given) and issues a code to it for a fresh gateway. */
  async function authorize(
    options: { clientId?: string; personId?: string; consent?: string; gw?: ReturnType<typeof gateway>; redirectUri?: string; redirectUriSent?: boolean } = {},
  ) {
    const clientId = options.clientId ?? (await register()).client_id;
    const gw = options.gw ?? gateway(appUrl);
    const pair = pkcePair();
    const personId = options.personId ?? person.id;
    const { code } = await identity().issueAuthorizationCode({
      context: userContext(personId),
      clientId,
      redirectUri: options.redirectUri ?? REDIRECT,
      redirectUriSent: options.redirectUriSent ?? true,
      codeChallenge: pair.challenge,
      resource: gw.resource,
      gatewayId: gw.id,
      gatewaySlug: gw.slug,
      personId,
      consent: options.consent ?? 'allowed',
    });
    return { code, clientId, gw, verifier: pair.verifier, personId };
  }

  function exchange(grant: { code: string; clientId: string; verifier: string }, overrides: Record<string, string> = {}) {
    return identity().exchangeCode({
      code: grant.code,
      clientId: grant.clientId,
      redirectUri: REDIRECT,
      codeVerifier: grant.verifier,
      resource: '',
      clientIp: '203.0.113.10',
      requestId: `req-${randomUUID()}`,
      ...overrides,
    });
  }

  /** A connection with its first pair. */
  async function connect(options: Parameters<typeof authorize>[0] = {}) {
    const grant = await authorize(options);
    const tokens = await exchange(grant);
    expect(tokens.error).toBeUndefined();
    return { ...grant, tokens };
  }

  const refresh = (refreshToken: string, clientId: string, resource = '') =>
    identity().refreshToken({ refreshToken, clientId, resource, clientIp: '203.0.113.11', requestId: `req-${randomUUID()}` });

  const validate = (token: string, slug: string) => identity().validateAccessToken({ token, gatewaySlug: slug });

  const connectionOf = async (accessToken: string, slug: string) => (await validate(accessToken, slug)).connectionId;

  describe('dynamic client registration (RFC 7591)', () => {
    it('registers a public client and echoes its metadata, never a secret; audited on the platform team', async () => {
      const response = await identity().registerClient({
        metadataJson: JSON.stringify({
          redirect_uris: ['https://app.example/cb', 'http://localhost:9000/cb', 'http://[::1]/cb', 'http://127.9.8.7:1/x?y=1'],
          client_name: 'Editor',
          client_uri: 'https://app.example/',
          software_id: 'ignored',
          scope: 'ignored too',
        }),
        clientIp: '203.0.113.9',
        requestId: 'req-register-1',
      });
      expect(response.error).toBeUndefined();
      const body = JSON.parse(response.responseJson);
      expect(body).toEqual({
        client_id: expect.stringMatching(/^svccl_[A-Za-z0-9_-]{32}$/),
        client_id_issued_at: expect.any(Number),
        redirect_uris: ['https://app.example/cb', 'http://localhost:9000/cb', 'http://[::1]/cb', 'http://127.9.8.7:1/x?y=1'],
        client_name: 'Editor',
        client_uri: 'https://app.example/',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
      expect(Math.abs(body.client_id_issued_at - Date.now() / 1000)).toBeLessThan(120);
      const [entry] = await eventually(() => auditEntries(db, 'oauth.client_register', body.client_id), (rows) => rows.length === 1);
      expect(entry).toMatchObject({
        team_id: PLATFORM_TEAM_ID,
        target_type: 'oauth_client',
        client_ip: '203.0.113.9',
        request_id: 'req-register-1',
        metadata: { clientId: body.client_id, clientName: 'Editor', redirectHosts: ['app.example', 'localhost:9000', '[::1]', '127.9.8.7:1'] },
      });
      expect(entry!.actor).toMatchObject({ kind: 'system', userId: null });
    });

    it.each([
      ['no redirect_uris', {}, 'invalid_redirect_uri'],
      ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
      ['http on a public host', { redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      ['http on a private address', { redirect_uris: ['http://10.0.0.1/cb'] }, 'invalid_redirect_uri'],
      ['a fragment', { redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
      ['an empty fragment', { redirect_uris: ['https://app.example/cb#'] }, 'invalid_redirect_uri'],
      ['a custom scheme', { redirect_uris: ['myapp://cb'] }, 'invalid_redirect_uri'],
      ['a relative URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
      ['a non-string URI', { redirect_uris: [42] }, 'invalid_redirect_uri'],
      ['a confidential client', { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      ['private_key_jwt', { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      ['client_credentials', { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'client_credentials'] }, 'invalid_client_metadata'],
      ['implicit response type', { redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
      ['a long client_name', { redirect_uris: [REDIRECT], client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
      ['a non-string client_name', { redirect_uris: [REDIRECT], client_name: 7 }, 'invalid_client_metadata'],
      // PostgreSQL stores neither a NUL nor (in the audit entry's JSON) an unpaired surrogate: invalid metadata, not a 500.
      ['a NUL in client_name', { redirect_uris: [REDIRECT], client_name: 'a\u0000b' }, 'invalid_client_metadata'],
      ['an unpaired surrogate in client_name', { redirect_uris: [REDIRECT], client_name: '\ud800' }, 'invalid_client_metadata'],
      ['a NUL in a redirect URI', { redirect_uris: ['https://app.example/c\u0000b'] }, 'invalid_redirect_uri'],
      ['an unpaired surrogate in a redirect URI', { redirect_uris: ['https://app.example/\udc00'] }, 'invalid_redirect_uri'],
      ['a NUL in client_uri', { redirect_uris: [REDIRECT], client_uri: 'https://app.example/\u0000' }, 'invalid_client_metadata'],
      ['an unpaired surrogate in logo_uri', { redirect_uris: [REDIRECT], logo_uri: 'https://app.example/\ud800.png' }, 'invalid_client_metadata'],
      // The URL parser finds a host where none is written ("https:///cb", "https:cb" → host "cb", "\\" read as "/").
      ['an empty authority', { redirect_uris: ['https:///cb'] }, 'invalid_redirect_uri'],
      ['no authority', { redirect_uris: ['https:cb'] }, 'invalid_redirect_uri'],
      ['a backslash', { redirect_uris: ['https://app.example\\@evil.example/cb'] }, 'invalid_redirect_uri'],
      ['a newline', { redirect_uris: ['https://app.exa\nmple/cb'] }, 'invalid_redirect_uri'],
      ['a client_uri without a host as written', { redirect_uris: [REDIRECT], client_uri: 'https:///app.example' }, 'invalid_client_metadata'],
    ])('refuses %s', async (_label, metadata, error) => {
      const before = await db.query('SELECT count(*)::int AS n FROM identity.oauth_clients');
      const response = await identity().registerClient({ metadataJson: JSON.stringify(metadata), clientIp: '', requestId: '' });
      expect(response.error?.error).toBe(error);
      expect(response.error?.errorDescription).toEqual(expect.any(String));
      expect(response.responseJson).toBe('');
      expect((await db.query('SELECT count(*)::int AS n FROM identity.oauth_clients')).rows[0].n).toBe(before.rows[0].n);
    });

    it('refuses a body that is not a JSON object', async () => {
      for (const metadataJson of ['not json', '[]', '"x"', 'null']) {
        const response = await identity().registerClient({ metadataJson, clientIp: '', requestId: '' });
        expect(response.error?.error).toBe('invalid_client_metadata');
      }
    });

    it('accepts a client_uri and logo_uri without a path (only client IDs need one)', async () => {
      const body = await register({ client_uri: 'https://app.example', logo_uri: 'https://app.example?logo' });
      expect(body).toMatchObject({ client_uri: 'https://app.example', logo_uri: 'https://app.example?logo' });
    });

    it('accepts 200 characters of client_name and token_endpoint_auth_method none', async () => {
      const body = await register({ client_name: 'n'.repeat(200), token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] });
      expect(body.client_name).toHaveLength(200);
      expect(body.grant_types).toEqual(['authorization_code']);
    });
  });

  describe('resolving clients', () => {
    it('resolves a registered client as unverified and never trusted', async () => {
      const { client_id } = await register();
      const resolved = await identity().resolveClient({ clientId: client_id });
      expect(resolved.problem).toBe('');
      expect(resolved.client).toMatchObject({ clientId: client_id, clientName: 'Test Client', redirectUris: [REDIRECT], verified: false, trusted: false, registeredAt: expect.any(String) });
    });

    it('refuses unknown, http, malformed and empty client ids with a problem', async () => {
      for (const clientId of ['svccl_doesnotexistdoesnotexist00', 'svccl_x', 'http://app.example/client.json', 'not a url', '', 'ftp://x/y', 'https:app.example/c.json']) {
        const resolved = await identity().resolveClient({ clientId });
        expect(resolved.client).toBeUndefined();
        expect(resolved.problem).not.toBe('');
      }
      // A client ID URL must contain a path (draft-ietf-oauth-client-id-metadata-document) and name its host as
      // written; refused for its shape, before any fetch.
      for (const [clientId, problem] of [
        ['https://app.example', /^The client ID must contain a path/],
        ['https://app.example?x=1', /^The client ID must contain a path/],
        ['https:///client.json', /^The client ID must name a host/],
      ] as const) {
        expect((await identity().resolveClient({ clientId })).problem).toMatch(problem);
      }
    });

    it('expires a registration unused for 30 days; one that received a code never expires', async () => {
      const unused = (await register()).client_id;
      const used = (await authorize()).clientId;
      expect((await db.query('SELECT expires_at FROM identity.oauth_clients WHERE id = $1', [used])).rows[0].expires_at).toBeNull();
      const expiry = (await db.query(`SELECT expires_at - registered_at AS ttl FROM identity.oauth_clients WHERE id = $1`, [unused])).rows[0].ttl;
      expect(expiry).toMatchObject({ days: 30 });
      await db.query(`UPDATE identity.oauth_clients SET registered_at = now() - interval '31 days', expires_at = now() - interval '1 day' WHERE id = $1`, [unused]);
      expect((await identity().resolveClient({ clientId: unused })).problem).toMatch(/expired/);
      await db.query(`UPDATE identity.oauth_clients SET registered_at = now() - interval '31 days' WHERE id = $1`, [used]);
      expect((await identity().resolveClient({ clientId: used })).client?.clientId).toBe(used);
    });
  });

  describe('consent and authorization codes', () => {
    it('remembers consent given with Allow per person, client and gateway, audited how=allowed', async () => {
      const grant = await authorize({ consent: 'allowed' });
      expect(grant.code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await identity().getConsent({ personId: person.id, clientId: grant.clientId, gatewayId: grant.gw.id })).remembered).toBe(true);
      expect((await identity().getConsent({ personId: person.id, clientId: grant.clientId, gatewayId: randomUUID() })).remembered).toBe(false);
      const other = await createPerson(admin, 'oauth-other');
      expect((await identity().getConsent({ personId: other.id, clientId: grant.clientId, gatewayId: grant.gw.id })).remembered).toBe(false);
      const [entry] = await eventually(() => auditEntries(db, 'oauth.consent', grant.clientId), (rows) => rows.length === 1);
      expect(entry).toMatchObject({ team_id: PLATFORM_TEAM_ID, metadata: { how: 'allowed', clientId: grant.clientId, clientName: 'Test Client', gatewayId: grant.gw.id } });
      expect(entry!.actor).toMatchObject({ kind: 'user', userId: person.id });

      // Remembered: a code at once, no second consent entry.
      const again = await authorize({ clientId: grant.clientId, gw: grant.gw, consent: 'remembered' });
      expect(again.code).not.toBe(grant.code);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await auditEntries(db, 'oauth.consent', grant.clientId)).toHaveLength(1);
    });

    it('refuses "remembered" without a remembered consent and "trusted" for a client not on the list', async () => {
      const { client_id } = await register();
      await expect(authorize({ clientId: client_id, consent: 'remembered' })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(authorize({ clientId: client_id, consent: 'trusted' })).rejects.toMatchObject({ code: 'forbidden' });
      await expect(authorize({ clientId: client_id, consent: 'maybe' })).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('issues codes only for a registered redirect URI; a loopback one may name any port', async () => {
      const { client_id } = await register();
      await expect(authorize({ clientId: client_id, redirectUri: 'http://127.0.0.1:33418/other' })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(authorize({ clientId: client_id, redirectUri: 'https://evil.example/callback' })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(authorize({ clientId: client_id, redirectUri: 'http://localhost:33418/callback' })).rejects.toMatchObject({ code: 'invalid_request' });
      const otherPort = await authorize({ clientId: client_id, redirectUri: 'http://127.0.0.1:50000/callback' });
      // The exchange must then name the same URI as the authorization request.
      expect((await exchange(otherPort)).error?.error).toBe('invalid_grant');
      expect((await exchange(otherPort, { redirectUri: 'http://127.0.0.1:50000/callback' })).error).toBeUndefined();
    });

    it('refuses a malformed PKCE challenge and an unknown or suspended person', async () => {
      const { client_id } = await register();
      const gw = gateway(appUrl);
      const base = { context: userContext(person.id), clientId: client_id, redirectUri: REDIRECT, redirectUriSent: true, resource: gw.resource, gatewayId: gw.id, gatewaySlug: gw.slug, personId: person.id, consent: 'allowed' };
      await expect(identity().issueAuthorizationCode({ ...base, codeChallenge: 'short' })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(identity().issueAuthorizationCode({ ...base, codeChallenge: pkcePair().challenge, personId: randomUUID() })).rejects.toMatchObject({ code: 'forbidden' });
    });
  });

  describe('the authorization_code grant', () => {
    it('requires redirect_uri at the token endpoint only when the authorization request named it (RFC 6749 §4.1.3)', async () => {
      const named = await authorize();
      expect((await exchange(named, { redirectUri: '' })).error).toMatchObject({ error: 'invalid_request' });
      // The refusal did not burn the code: the rightful request still succeeds.
      expect((await exchange(named)).accessToken).toMatch(/^svcat_/);
      const implied = await authorize({ redirectUriSent: false });
      expect((await exchange(implied, { redirectUri: '' })).accessToken).toMatch(/^svcat_/);
    });

    it('exchanges a code once for a Bearer pair bound to the gateway; audited without any token', async () => {
      const grant = await authorize();
      const tokens = await exchange(grant, { resource: grant.gw.resource });
      expect(tokens).toEqual({
        accessToken: expect.stringMatching(/^svcat_[A-Za-z0-9_-]{43}$/),
        refreshToken: expect.stringMatching(/^svcrt_[A-Za-z0-9_-]{43}$/),
        expiresIn: 3600,
        tokenType: 'Bearer',
        // For the edge's gateway access check before it hands the tokens over (never sent to the client).
        personId: person.id,
        gatewayId: grant.gw.id,
        gatewaySlug: grant.gw.slug,
      });
      const valid = await validate(tokens.accessToken, grant.gw.slug);
      expect(valid).toMatchObject({ valid: true, personId: person.id, email: person.email, gatewayId: grant.gw.id, clientId: grant.clientId, clientName: 'Test Client', clientVerified: false });
      const stored = await db.query('SELECT digest, kind, generation, expires_at - created_at AS ttl FROM identity.oauth_tokens WHERE connection_id = $1 ORDER BY kind', [valid.connectionId]);
      expect(stored.rows.map((r) => [r.kind, r.generation])).toEqual([['access', 1], ['refresh', 1]]);
      expect(stored.rows.some((r) => r.digest === tokens.accessToken || r.digest.includes('svc'))).toBe(false);
      expect(stored.rows[0].ttl).toMatchObject({ hours: 1 });
      expect(stored.rows[1].ttl).toMatchObject({ days: 30 });
      const [entry] = await eventually(() => auditEntries(db, 'oauth.token_issue', valid.connectionId), (rows) => rows.length === 1);
      expect(entry).toMatchObject({
        team_id: PLATFORM_TEAM_ID,
        client_ip: '203.0.113.10',
        metadata: { clientId: grant.clientId, gatewayId: grant.gw.id, connectionId: valid.connectionId, grant: 'authorization_code' },
      });
      expect(JSON.stringify(entry)).not.toMatch(/svcat_|svcrt_/);
      expect(JSON.stringify(entry)).not.toContain(grant.code);
    });

    it('a second use of a code fails and revokes what the first use issued', async () => {
      const grant = await authorize();
      const first = await exchange(grant);
      expect(first.error).toBeUndefined();
      const connectionId = await connectionOf(first.accessToken, grant.gw.slug);
      const second = await exchange(grant);
      expect(second.error?.error).toBe('invalid_grant');
      expect(second.accessToken).toBe('');
      expect((await validate(first.accessToken, grant.gw.slug)).valid).toBe(false);
      expect((await refresh(first.refreshToken, grant.clientId)).error?.error).toBe('invalid_grant');
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', connectionId), (rows) => rows.length === 1);
      expect(entry!.metadata).toMatchObject({ connectionId, reason: 'authorization_code_reuse' });
    });

    it('two simultaneous exchanges of one code: one wins, the other fails and revokes it', async () => {
      const grant = await authorize();
      const results = await Promise.all([exchange(grant), exchange(grant)]);
      const winners = results.filter((r) => !r.error);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.error?.error === 'invalid_grant')).toHaveLength(1);
      expect((await validate(winners[0]!.accessToken, grant.gw.slug)).valid).toBe(false);
    });

    it('stores a code only as its keyed digest, never the code itself', async () => {
      const grant = await authorize();
      const rows = (await db.query('SELECT row_to_json(c)::text AS row, digest FROM identity.oauth_codes c WHERE client_id = $1', [grant.clientId])).rows;
      expect(rows).toHaveLength(1);
      expect(rows[0].digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(rows[0].row).not.toContain(grant.code);
    });

    it('a code expires after 60 seconds', async () => {
      const grant = await authorize();
      const ttl = (await db.query(`SELECT expires_at - created_at AS ttl FROM identity.oauth_codes WHERE client_id = $1`, [grant.clientId])).rows[0].ttl;
      expect(ttl).toMatchObject({ minutes: 1 });
      await db.query(`UPDATE identity.oauth_codes SET expires_at = now() - interval '1 second' WHERE client_id = $1`, [grant.clientId]);
      expect((await exchange(grant)).error?.error).toBe('invalid_grant');
    });

    it('compares resource in the canonical form the edge used at authorize: case, default port (RFC 8707 §2)', async () => {
      for (const [bound, sent] of [
        ['https://gw.example', 'HTTPS://GW.Example:443'],
        ['http://gw.example', 'http://gw.example:80'],
      ] as const) {
        const slug = `gw-${randomUUID().slice(0, 8)}`;
        const grant = await authorize({ gw: { id: randomUUID(), slug, resource: `${bound}/mcp/${slug}` } });
        expect((await exchange(grant, { resource: `${sent}/mcp/${slug}/` })).error?.error).toBe('invalid_target');
        expect((await exchange(grant, { resource: `${sent}/mcp/${slug}?x=1` })).error?.error).toBe('invalid_target');
        expect((await exchange(grant, { resource: `${sent}/x/../mcp/${slug}` })).error?.error).toBe('invalid_target');
        expect((await exchange(grant, { resource: `${sent.replace(/gw\./i, 'other.')}/mcp/${slug}` })).error?.error).toBe('invalid_target');
        const tokens = await exchange(grant, { resource: `${sent}/mcp/${slug}` });
        expect(tokens.error).toBeUndefined();
        const next = await refresh(tokens.refreshToken, grant.clientId, `${sent}/mcp/${slug}`);
        expect(next.error).toBeUndefined();
        expect((await refresh(next.refreshToken, grant.clientId, `${sent}/mcp/other`)).error?.error).toBe('invalid_target');
      }
    });

    it('refuses a wrong verifier, redirect URI, client or resource without burning the code', async () => {
      const grant = await authorize();
      expect((await exchange(grant, { codeVerifier: pkcePair().verifier })).error?.error).toBe('invalid_grant');
      expect((await exchange(grant, { redirectUri: 'http://127.0.0.1:33418/callback/' })).error?.error).toBe('invalid_grant');
      expect((await exchange(grant, { clientId: (await register()).client_id })).error?.error).toBe('invalid_grant');
      expect((await exchange(grant, { resource: `${appUrl}/mcp/another` })).error?.error).toBe('invalid_target');
      expect((await exchange(grant, { codeVerifier: 'short' })).error?.error).toBe('invalid_request');
      expect((await exchange(grant, { codeVerifier: `${'a'.repeat(42)}!` })).error?.error).toBe('invalid_request');
      expect((await exchange(grant, { codeVerifier: '' })).error?.error).toBe('invalid_request');
      expect((await exchange(grant, { clientId: '' })).error?.error).toBe('invalid_request');
      expect((await exchange({ ...grant, code: 'not-a-code' })).error?.error).toBe('invalid_grant');
      // The rightful client still succeeds.
      expect((await exchange(grant)).error).toBeUndefined();
    });
  });

  describe('the refresh_token grant (rotation)', () => {
    const generationOf = async (connectionId: string) =>
      (await db.query('SELECT refresh_generation FROM identity.oauth_connections WHERE id = $1', [connectionId])).rows[0].refresh_generation;

    it('replaces the pair at every use; audited with grant refresh_token', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      const next = await refresh(tokens.refreshToken, clientId, gw.resource);
      expect(next).toEqual({
        accessToken: expect.stringMatching(/^svcat_/),
        refreshToken: expect.stringMatching(/^svcrt_/),
        expiresIn: 3600,
        tokenType: 'Bearer',
        personId: person.id,
        gatewayId: gw.id,
        gatewaySlug: gw.slug,
      });
      expect(next.refreshToken).not.toBe(tokens.refreshToken);
      expect((await validate(next.accessToken, gw.slug)).connectionId).toBe(connectionId);
      expect(await generationOf(connectionId)).toBe(2);
      const third = await refresh(next.refreshToken, clientId);
      expect(third.error).toBeUndefined();
      expect(await generationOf(connectionId)).toBe(3);
      // Stored with each grant (the rotation's own statement), not later.
      const entries = await auditEntries(db, 'oauth.token_issue', connectionId);
      expect(entries.map((e) => e.metadata.grant)).toEqual(['authorization_code', 'refresh_token', 'refresh_token']);
      expect(JSON.stringify(entries)).not.toMatch(/svcat_|svcrt_/);
    });

    it('the immediate predecessor presented again within 30 s gets another pair', async () => {
      const { tokens, clientId, gw } = await connect();
      const next = await refresh(tokens.refreshToken, clientId);
      const again = await refresh(tokens.refreshToken, clientId);
      expect(again.error).toBeUndefined();
      expect(again.refreshToken).not.toBe(next.refreshToken);
      // Both new refresh tokens work, and the connection lives on.
      expect((await refresh(again.refreshToken, clientId)).error).toBeUndefined();
      expect((await validate(next.accessToken, gw.slug)).valid).toBe(true);
    });

    it('two concurrent refreshes with the same token both succeed', async () => {
      const { tokens, clientId, gw } = await connect();
      const [a, b] = await Promise.all([refresh(tokens.refreshToken, clientId), refresh(tokens.refreshToken, clientId)]);
      expect(a!.error).toBeUndefined();
      expect(b!.error).toBeUndefined();
      expect(a!.refreshToken).not.toBe(b!.refreshToken);
      expect((await validate(a!.accessToken, gw.slug)).valid).toBe(true);
      expect((await validate(b!.accessToken, gw.slug)).valid).toBe(true);
      // The client keeps one of them; its next refresh works.
      expect((await refresh(b!.refreshToken, clientId)).error).toBeUndefined();
    });

    it('grants arriving together (served by shared statements): each its own pair, generation and audit entry; a refused one changes nothing for the others', async () => {
      const connections = await Promise.all(Array.from({ length: 12 }, () => connect()));
      const ids = await Promise.all(connections.map((c) => connectionOf(c.tokens.accessToken, c.gw.slug)));
      const [revoked, twice] = connections;
      await identity().revokeConnection({ context: userContext(person.id), personId: person.id, connectionId: ids[0]! });

      const results = await Promise.all([
        ...connections.map((c) => refresh(c.tokens.refreshToken, c.clientId)),
        refresh(twice!.tokens.refreshToken, twice!.clientId),
      ]);

      expect(results[0]!.error?.error).toBe('invalid_grant');
      expect((await refresh(revoked!.tokens.refreshToken, revoked!.clientId)).error?.error).toBe('invalid_grant');
      const issued = results.slice(1);
      for (const result of issued) expect(result.error).toBeUndefined();
      expect(new Set(issued.map((result) => result.refreshToken)).size).toBe(issued.length);
      for (const [index, c] of connections.entries()) {
        if (index === 0) continue;
        expect(await generationOf(ids[index]!)).toBe(2);
        const mine = [results[index]!, ...(index === 1 ? [results[connections.length]!] : [])];
        for (const result of mine) expect(await connectionOf(result.accessToken, c.gw.slug)).toBe(ids[index]);
        const entries = await auditEntries(db, 'oauth.token_issue', ids[index]!);
        expect(entries.map((entry) => entry.metadata.grant)).toEqual(['authorization_code', ...mine.map(() => 'refresh_token')]);
      }
      expect(await auditEntries(db, 'oauth.token_issue', ids[0]!)).toHaveLength(1);
      expect(await generationOf(ids[0]!)).toBe(1);
    });

    it('a shared statement that fails (a deadlock) wrote nothing: each of its grants goes the careful way and succeeds once', async () => {
      const settledWithin = (promise: Promise<unknown>, ms: number) =>
        Promise.race([promise.then(() => true, () => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
      // Two rotations in one statement are needed; they share one when both reach the service in one turn, which
      // tokens it remembers (a second generation: no read first) and calls sent together almost always do.
      for (let attempt = 1; ; attempt++) {
        const [x, y] = await Promise.all([connect(), connect()]);
        const [idX, idY] = await Promise.all([connectionOf(x!.tokens.accessToken, x!.gw.slug), connectionOf(y!.tokens.accessToken, y!.gw.slug)]);
        const [tokenX, tokenY] = await Promise.all([refresh(x!.tokens.refreshToken, x!.clientId), refresh(y!.tokens.refreshToken, y!.clientId)]);

        // Another session holds X's connection; the statement claims both tokens, then waits for it.
        const blocker = await databaseOf(platform, { required: true });
        try {
          await blocker.query('BEGIN');
          // This session waits longest before looking for a deadlock, so the service's statement is the one refused.
          await blocker.query(`SET LOCAL deadlock_timeout = '20s'`);
          await blocker.query('SELECT 1 FROM identity.oauth_connections WHERE id = $1 FOR UPDATE', [idX]);
          const grants = [refresh(tokenX!.refreshToken, x!.clientId), refresh(tokenY!.refreshToken, y!.clientId)];
          if (await settledWithin(grants[1]!, 500)) {
            // Y went in a statement of its own: no deadlock to make. Let X through and try again.
            await blocker.query('ROLLBACK');
            await Promise.all(grants);
            if (attempt < 5) continue;
            throw new Error('two grants sent together never shared a statement in 5 attempts');
          }
          // Y's claimed token is held by the waiting statement: touching it closes the cycle, and PostgreSQL ends
          // the statement (not this session, which would wait 20 s before looking).
          await blocker.query(`UPDATE identity.oauth_tokens SET revoked_at = revoked_at WHERE connection_id = $1 AND kind = 'refresh' AND rotated_at IS NULL`, [idY]);
          await blocker.query('ROLLBACK');
          const [grantX, grantY] = await Promise.all(grants);
          expect(grantX!.error).toBeUndefined();
          expect(grantY!.error).toBeUndefined();
        } finally {
          await blocker.end();
        }
        for (const id of [idX, idY]) {
          expect(await generationOf(id)).toBe(3);
          const entries = await auditEntries(db, 'oauth.token_issue', id);
          expect(entries.map((entry) => entry.metadata.generation ?? entry.metadata.grant)).toEqual(['authorization_code', 2, 3]);
        }
        return;
      }
    });

    it('a retired token presented more than 30 s after rotation revokes the whole connection', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      const next = await refresh(tokens.refreshToken, clientId);
      await db.query(`UPDATE identity.oauth_tokens SET rotated_at = now() - interval '31 seconds' WHERE connection_id = $1 AND generation = 1 AND kind = 'refresh'`, [connectionId]);
      const replay = await refresh(tokens.refreshToken, clientId);
      expect(replay.error?.error).toBe('invalid_grant');
      expect((await validate(next.accessToken, gw.slug)).valid).toBe(false);
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
      expect((await refresh(next.refreshToken, clientId)).error?.error).toBe('invalid_grant');
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', connectionId), (rows) => rows.length === 1);
      expect(entry!.metadata).toMatchObject({ connectionId, reason: 'refresh_token_reuse' });
    });

    it('an older generation (not the immediate predecessor) revokes the connection even within 30 s', async () => {
      const { tokens, clientId, gw } = await connect();
      const second = await refresh(tokens.refreshToken, clientId);
      const third = await refresh(second.refreshToken, clientId);
      expect(third.error).toBeUndefined();
      expect((await refresh(tokens.refreshToken, clientId)).error?.error).toBe('invalid_grant');
      expect((await validate(third.accessToken, gw.slug)).valid).toBe(false);
      expect((await refresh(third.refreshToken, clientId)).error?.error).toBe('invalid_grant');
    });

    it('a token this service issued is still checked in the database: a rename, a suspension, a revocation since', async () => {
      const renamed = await createPerson(admin, 'oauth-renamed');
      const { tokens, clientId, gw } = await connect({ personId: renamed.id });
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      // Issued by a rotation, so the service remembers the next token's context; the person changes meanwhile.
      const second = await refresh(tokens.refreshToken, clientId);
      await db.query(`UPDATE identity.people SET display_name = 'Renamed Person', email = $2 WHERE id = $1`, [renamed.id, `renamed-${randomUUID()}@example.test`]);
      const third = await refresh(second.refreshToken, clientId);
      expect(third.error).toBeUndefined();
      const entries = await eventually(() => auditEntries(db, 'oauth.token_issue', connectionId), (rows) => rows.length === 3);
      expect(entries[2]!.actor).toMatchObject({ userId: renamed.id, displayName: 'Renamed Person' });
      expect(entries[2]!.metadata).toMatchObject({ grant: 'refresh_token', generation: 3 });

      await db.query(`UPDATE identity.people SET status = 'suspended' WHERE id = $1`, [renamed.id]);
      expect((await refresh(third.refreshToken, clientId)).error?.error).toBe('invalid_grant');
      await db.query(`UPDATE identity.people SET status = 'active' WHERE id = $1`, [renamed.id]);
      const fourth = await refresh(third.refreshToken, clientId);
      expect(fourth.error).toBeUndefined();

      await identity().revokeConnection({ context: userContext(renamed.id), personId: renamed.id, connectionId });
      expect((await refresh(fourth.refreshToken, clientId)).error?.error).toBe('invalid_grant');
    });

    it('a token rotated through another replica is not claimed again from what this one remembers: replay', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      const second = await refresh(tokens.refreshToken, clientId);
      // Another replica rotated the second token 31 s ago (this one still remembers it as live).
      await db.query(
        `UPDATE identity.oauth_tokens SET rotated_at = now() - interval '31 seconds' WHERE connection_id = $1 AND generation = 2 AND kind = 'refresh'`,
        [connectionId],
      );
      expect((await refresh(second.refreshToken, clientId)).error?.error).toBe('invalid_grant');
      expect((await validate(second.accessToken, gw.slug)).valid).toBe(false);
    });

    it('moves the shared auth generation only when a replay revoked the connection, not at a rotation', async () => {
      const cache: Cache = createCache(
        { kind: 'redis', url: platform.env.REDIS_URL!, keyPrefix: platform.env.REDIS_KEY_PREFIX! },
        createLogger({ level: 'silent' }),
      );
      try {
        const { tokens, clientId } = await connect();
        const before = await readAuthGeneration(cache);
        const second = await refresh(tokens.refreshToken, clientId);
        const third = await refresh(second.refreshToken, clientId);
        expect(third.error).toBeUndefined();
        expect(await readAuthGeneration(cache)).toBe(before);
        expect((await refresh(tokens.refreshToken, clientId)).error?.error).toBe('invalid_grant');
        expect(await readAuthGeneration(cache)).not.toBe(before);
      } finally {
        await cache.close();
      }
    });

    it("refuses another client's use, an unknown, an expired or an access token, changing nothing", async () => {
      const { tokens, clientId, gw } = await connect();
      const other = (await register()).client_id;
      expect((await refresh(tokens.refreshToken, other)).error?.error).toBe('invalid_grant');
      expect((await refresh('svcrt_unknown', clientId)).error?.error).toBe('invalid_grant');
      expect((await refresh(tokens.accessToken, clientId)).error?.error).toBe('invalid_grant');
      expect((await refresh(tokens.refreshToken, clientId, `${appUrl}/mcp/elsewhere`)).error?.error).toBe('invalid_target');
      expect((await refresh(tokens.refreshToken, '')).error?.error).toBe('invalid_request');
      // None of those burned the token.
      const next = await refresh(tokens.refreshToken, clientId);
      expect(next.error).toBeUndefined();
      const connectionId = await connectionOf(next.accessToken, gw.slug);
      await db.query(`UPDATE identity.oauth_tokens SET expires_at = now() - interval '1 second' WHERE connection_id = $1 AND generation = 2 AND kind = 'refresh'`, [connectionId]);
      expect((await refresh(next.refreshToken, clientId)).error?.error).toBe('invalid_grant');
    });
  });

  describe('revocation (RFC 7009)', () => {
    it('an access token revokes only itself', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      await identity().revokeToken({ token: tokens.accessToken, tokenTypeHint: 'access_token', clientId, clientIp: '203.0.113.12', requestId: 'r', reason: '' });
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
      const next = await refresh(tokens.refreshToken, clientId);
      expect(next.error).toBeUndefined();
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', connectionId), (rows) => rows.length === 1);
      expect(entry!.metadata).toEqual({ connectionId, kind: 'access_token', clientId });
      expect(JSON.stringify(entry)).not.toMatch(/svcat_|svcrt_/);
    });

    it('a refresh token revokes the whole connection (even with a wrong hint)', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      await identity().revokeToken({ token: tokens.refreshToken, tokenTypeHint: 'access_token', clientId, clientIp: '', requestId: '', reason: '' });
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
      expect((await refresh(tokens.refreshToken, clientId)).error?.error).toBe('invalid_grant');
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', connectionId), (rows) => rows.length === 1);
      expect(entry!.metadata).toEqual({ connectionId, kind: 'refresh_token', clientId });
    });

    it('the edge ending a grant itself names its reason in the audit entry; an unknown reason is refused, changing nothing', async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      const revoke = (reason: string) => identity().revokeToken({ token: tokens.refreshToken, tokenTypeHint: 'refresh_token', clientId, clientIp: '', requestId: '', reason });
      await expect(revoke('because')).rejects.toMatchObject({ code: 'invalid_request' });
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(true);
      await expect(revoke('gateway_access_lost')).resolves.toEqual({});
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', connectionId), (rows) => rows.length === 1);
      expect(entry!.metadata).toEqual({ connectionId, kind: 'refresh_token', clientId, reason: 'gateway_access_lost' });
    });

    it("another client's token or an unknown one: success, nothing changed, nothing audited", async () => {
      const { tokens, clientId, gw } = await connect();
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      const other = (await register()).client_id;
      await expect(identity().revokeToken({ token: tokens.refreshToken, tokenTypeHint: '', clientId: other, clientIp: '', requestId: '', reason: '' })).resolves.toEqual({});
      await expect(identity().revokeToken({ token: 'svcrt_nothing', tokenTypeHint: '', clientId, clientIp: '', requestId: '', reason: '' })).resolves.toEqual({});
      await expect(identity().revokeToken({ token: 'garbage', tokenTypeHint: '', clientId, clientIp: '', requestId: '', reason: '' })).resolves.toEqual({});
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(true);
      expect((await refresh(tokens.refreshToken, clientId)).error).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await auditEntries(db, 'oauth.revoke', connectionId)).toEqual([]);
    });
  });

  describe('validating access tokens', () => {
    it('accepts a token only at its own gateway; refuses expired ones; records use at most once a minute', async () => {
      const { tokens, gw } = await connect();
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(true);
      expect(await validate(tokens.accessToken, 'another-gateway')).toMatchObject({ valid: false, personId: '' });
      expect((await validate(tokens.refreshToken, gw.slug)).valid).toBe(false);
      expect((await validate('svcat_unknown', gw.slug)).valid).toBe(false);
      const connectionId = await connectionOf(tokens.accessToken, gw.slug);
      await db.query(`UPDATE identity.oauth_connections SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, [connectionId]);
      await validate(tokens.accessToken, gw.slug);
      const touched = (await db.query(`SELECT last_used_at > now() - interval '10 seconds' AS recent FROM identity.oauth_connections WHERE id = $1`, [connectionId])).rows[0];
      expect(touched.recent).toBe(true);
      await db.query(`UPDATE identity.oauth_tokens SET expires_at = now() - interval '1 second' WHERE connection_id = $1 AND kind = 'access'`, [connectionId]);
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
    });

    it('a suspended person: access tokens invalid and refresh refused at once', async () => {
      const suspended = await createPerson(admin, 'oauth-suspended');
      const { tokens, clientId, gw } = await connect({ personId: suspended.id });
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(true);
      const change = await admin.patch(`/v1/admin/people/${suspended.id}`, { status: 'suspended' }, { 'if-match': `"${suspended.revision}"` });
      expect(change.status).toBe(200);
      expect((await validate(tokens.accessToken, gw.slug)).valid).toBe(false);
      expect((await refresh(tokens.refreshToken, clientId)).error?.error).toBe('invalid_grant');
    });
  });

  describe('connected apps', () => {
    it("lists a person's connections newest first with paging and lets them disconnect one", async () => {
      const owner = await createPerson(admin, 'oauth-apps');
      const first = await connect({ personId: owner.id });
      const second = await connect({ personId: owner.id });
      const third = await connect({ personId: owner.id });
      const ids = await Promise.all([first, second, third].map((c) => connectionOf(c.tokens.accessToken, c.gw.slug)));
      const page1 = await identity().listConnections({ personId: owner.id, page: { pageSize: 2, cursor: '' } });
      expect(page1.connections.map((c) => c.id)).toEqual([ids[2], ids[1]]);
      expect(page1.connections[0]).toMatchObject({ personId: owner.id, clientId: third.clientId, clientName: 'Test Client', clientVerified: false, gatewayId: third.gw.id, gatewaySlug: third.gw.slug, createdAt: expect.any(String), lastUsedAt: expect.any(String) });
      const page2 = await identity().listConnections({ personId: owner.id, page: { pageSize: 2, cursor: page1.page!.nextCursor } });
      expect(page2.connections.map((c) => c.id)).toEqual([ids[0]]);
      expect(page2.page!.nextCursor).toBe('');

      const stranger = await createPerson(admin, 'oauth-stranger');
      await expect(identity().revokeConnection({ context: userContext(stranger.id), personId: stranger.id, connectionId: ids[1]! })).rejects.toMatchObject({ code: 'not_found' });
      await identity().revokeConnection({ context: userContext(owner.id), personId: owner.id, connectionId: ids[1]! });
      expect((await validate(second.tokens.accessToken, second.gw.slug)).valid).toBe(false);
      expect((await refresh(second.tokens.refreshToken, second.clientId)).error?.error).toBe('invalid_grant');
      const listed = await identity().listConnections({ personId: owner.id, page: { pageSize: 50, cursor: '' } });
      expect(listed.connections.map((c) => c.id)).toEqual([ids[2], ids[0]]);
      await expect(identity().revokeConnection({ context: userContext(owner.id), personId: owner.id, connectionId: ids[1]! })).rejects.toMatchObject({ code: 'not_found' });
      const [entry] = await eventually(() => auditEntries(db, 'oauth.revoke', ids[1]!), (rows) => rows.length === 1);
      expect(entry!.metadata).toMatchObject({ connectionId: ids[1], by: 'person' });
      expect(entry!.actor).toMatchObject({ userId: owner.id });
    });
  });

  describe('trusted clients', () => {
    it('keeps a list of metadata document URLs only, audited', async () => {
      const { client_id } = await register();
      for (const bad of [[client_id], ['http://app.example/client.json'], ['not a url'], Array.from({ length: 201 }, (_, i) => `https://app.example/c${i}.json`)]) {
        await expect(identity().setTrustedClients({ context: userContext(person.id), clientIds: bad })).rejects.toMatchObject({ code: 'invalid_request' });
      }
      const set = await identity().setTrustedClients({ context: userContext(person.id), clientIds: ['https://b.example/client.json', 'https://a.example/client.json', 'https://a.example/client.json'] });
      expect(set.clientIds).toEqual(['https://a.example/client.json', 'https://b.example/client.json']);
      expect((await identity().listTrustedClients({})).clientIds).toEqual(set.clientIds);
      const [entry] = await eventually(() => auditEntries(db, 'oauth.trusted_clients_update', 'trusted_clients'), (rows) => rows.length >= 1);
      expect(entry).toMatchObject({ team_id: PLATFORM_TEAM_ID, before: { clientIds: [] }, after: { clientIds: set.clientIds } });
      expect((await identity().setTrustedClients({ context: userContext(person.id), clientIds: [] })).clientIds).toEqual([]);
    });
  });
});
