import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { createMemoryCache, createRateLimiter, type ServiceClients } from '@platform/runtime';
import { adminClient, grpcClients, memoryLogger, newPerson, pkcePair, startTestPlatform, type ApiClient, type LogLine, type TestPerson, type TestPlatform } from '@platform/test';
import { compileTrustProxy } from '../../src/client-address';
import type { EdgeDeps } from '../../src/edge-deps';
import { createGrantAccessCheck, GrantWithoutGateway } from '../../src/oauth/grant-access';
import { createTokenEndpoint } from '../../src/oauth/token-endpoint';
import { fetchManual, form, json } from './support';

/**
 * The token endpoint hands tokens over only while the person may still use the grant's gateway (docs/oauth.md,
 * Token): a refresh, or a code exchanged, after the person lost access fails with invalid_grant and ends the
 * connection, even when an earlier grant's allowed answer is remembered (AUTH_CACHE_SECONDS is on by default).
 */
let platform: TestPlatform;
let admin: ApiClient;
let appUrl: string;
let clientId: string;
const REDIRECT = 'http://127.0.0.1:9/callback';
const TEAM = 'grant-access-team';

beforeAll(async () => {
  platform = await startTestPlatform();
  appUrl = platform.platform.context.config.env.APP_URL;
  admin = await adminClient(platform);
  expect((await admin.post('/v1/teams', { slug: TEAM, name: 'Grant access team' })).status).toBe(201);
  const registered = await fetchManual(platform.url('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Grant Client', redirect_uris: [REDIRECT] }),
  });
  expect(registered.status).toBe(201);
  clientId = (await json(registered)).client_id;
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

async function gateway(slug: string): Promise<{ id: string; revision: number }> {
  const created = await admin.post(`/v1/teams/${TEAM}/gateways`, { slug, name: slug });
  expect(created.status).toBe(201);
  return created.body.data;
}

async function member(label: string): Promise<TestPerson> {
  const person = await newPerson(platform, admin, label);
  expect((await admin.post(`/v1/teams/${TEAM}/members`, { personId: person.id, role: 'member' })).status).toBe(201);
  return person;
}

/** Authorize (consent Allow) as `person` for the gateway; the code and its verifier. */
async function codeFor(person: TestPerson, slug: string): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${appUrl}/mcp/${slug}`,
  });
  const cookie = person.client.cookieHeader();
  const page = await fetchManual(platform.url(`/oauth/authorize?${query}`), { headers: { cookie } });
  expect(page.status).toBe(200);
  const fields = Object.fromEntries([...(await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]));
  const init = form({ ...fields, decision: 'allow' });
  const allowed = await fetchManual(platform.url('/oauth/authorize'), { ...init, headers: { ...(init.headers as Record<string, string>), cookie, origin: platform.origin } });
  expect(allowed.status).toBe(303);
  return { code: new URL(allowed.headers.get('location')!).searchParams.get('code')!, verifier };
}

const token = (params: Record<string, string>) => fetchManual(platform.url('/oauth/token'), form({ client_id: clientId, ...params }));
const exchange = (grant: { code: string; verifier: string }) =>
  token({ grant_type: 'authorization_code', code: grant.code, code_verifier: grant.verifier, redirect_uri: REDIRECT });
const refresh = (refreshToken: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken });

async function tokensOf(response: Response): Promise<{ access_token: string; refresh_token: string }> {
  expect(response.status).toBe(200);
  return json(response);
}

async function expectInvalidGrant(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  const body = await json(response);
  expect(body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
  expect(JSON.stringify(body)).not.toMatch(/svcat_|svcrt_/);
}

const connectionsOf = async (person: TestPerson) => (await person.client.get('/v1/me/connections')).body.data as Array<{ gatewaySlug: string }>;

it('a refresh after the person was removed from the gateway team fails and ends the connection, even once they are back', async () => {
  await gateway('ga-removed');
  const bob = await member('grant-bob');
  const first = await tokensOf(await exchange(await codeFor(bob, 'ga-removed')));
  // An allowed answer is now remembered: the removal must still be seen at the next refresh.
  const second = await tokensOf(await refresh(first.refresh_token));
  expect((await admin.delete(`/v1/teams/${TEAM}/members/${bob.id}`)).status).toBe(204);

  await expectInvalidGrant(await refresh(second.refresh_token));
  expect(await connectionsOf(bob)).toEqual([]);
  // Back in the team, the old grant stays ended: the app authorizes again.
  expect((await admin.post(`/v1/teams/${TEAM}/members`, { personId: bob.id, role: 'member' })).status).toBe(201);
  await expectInvalidGrant(await refresh(second.refresh_token));
  const mcp = await fetch(platform.url('/mcp/ga-removed'), { method: 'POST', headers: { authorization: `Bearer ${second.access_token}` } });
  expect(mcp.status).toBe(401);
});

it('a code exchanged after the person lost access fails and leaves no connection', async () => {
  await gateway('ga-code');
  const carol = await member('grant-carol');
  const grant = await codeFor(carol, 'ga-code');
  expect((await admin.delete(`/v1/teams/${TEAM}/members/${carol.id}`)).status).toBe(204);
  await expectInvalidGrant(await exchange(grant));
  expect(await connectionsOf(carol)).toEqual([]);
});

it('a refresh for a disabled gateway fails', async () => {
  const created = await gateway('ga-disabled');
  const dave = await member('grant-dave');
  const first = await tokensOf(await exchange(await codeFor(dave, 'ga-disabled')));
  const disabled = await admin.patch(`/v1/teams/${TEAM}/gateways/${created.id}`, { enabled: false }, { 'if-match': `"${created.revision}"` });
  expect(disabled.status).toBe(200);
  await expectInvalidGrant(await refresh(first.refresh_token));
});

it('a person who keeps access refreshes as before', async () => {
  await gateway('ga-kept');
  const erin = await member('grant-erin');
  const first = await tokensOf(await exchange(await codeFor(erin, 'ga-kept')));
  const second = await tokensOf(await refresh(first.refresh_token));
  await tokensOf(await refresh(second.refresh_token));
  expect((await connectionsOf(erin)).map((c) => c.gatewaySlug)).toEqual(['ga-kept']);
});

/**
 * An identity service of the version before TokenResponse named the grant's person and gateway, as a rolling upgrade
 * has it next to a new edge: the real identity service, its token answers without those fields (absent on the wire,
 * as that version sends them). No such version can be run here, so the real token endpoint of an edge is served
 * over it, beside the platform's own edge.
 */
describe('while the identity service is of the previous version (a rolling upgrade)', () => {
  let server: Server;
  let clients: ServiceClients;
  let lines: LogLine[];
  let deps: EdgeDeps;
  let skewedUrl: string;

  const withoutGrantSubject = (answer: TokenResponse): TokenResponse => ({ ...answer, personId: '', gatewaySlug: '', gatewayId: '' });

  beforeAll(async () => {
    clients = grpcClients(platform);
    const identity = clients.identity;
    const previousIdentity = new Proxy(identity, {
      get(target, name) {
        if (name === 'exchangeCode') return async (request: Parameters<typeof identity.exchangeCode>[0]) => withoutGrantSubject(await target.exchangeCode(request));
        if (name === 'refreshToken') return async (request: Parameters<typeof identity.refreshToken>[0]) => withoutGrantSubject(await target.refreshToken(request));
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const logged = memoryLogger();
    lines = logged.lines;
    const cache = createMemoryCache({ keyPrefix: 'previous-identity:' });
    deps = {
      clients: new Proxy(clients, { get: (target, name) => (name === 'identity' ? previousIdentity : Reflect.get(target, name)) }),
      cache,
      rateLimiter: createRateLimiter(cache),
      logger: logged.logger,
      settings: { appUrl, instanceName: 'Test Platform', sessionTtlSeconds: 3600, apiKeyRateLimitPerMinute: 600, authCacheSeconds: 30 },
    };
    const endpoint = createTokenEndpoint(deps, { trustProxy: compileTrustProxy(false) });
    server = createServer((req, res) => {
      if (!endpoint.serve(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    skewedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await clients?.close();
  });

  const skewedToken = (params: Record<string, string>) => fetchManual(skewedUrl, form({ client_id: clientId, ...params }));

  /** 503 temporarily_unavailable, no token in it, and one warning naming the version skew, no token in the log. */
  async function expectUnavailableForSkew(response: Response, logFrom: number): Promise<void> {
    expect(response.status).toBe(503);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    const logged = lines.slice(logFrom);
    const warnings = logged.filter((line) => line.level === 'warn' || line.level === 'error' || line.level === 'fatal');
    expect(warnings).toEqual([expect.objectContaining({ level: 'warn', msg: expect.stringContaining('without its person or gateway') })]);
    expect(JSON.stringify(logged)).not.toMatch(/svcat_|svcrt_/);
  }

  it('does not check a grant that names no person or gateway: neither allowed nor refused', async () => {
    const check = createGrantAccessCheck(deps);
    const grant: TokenResponse = { accessToken: 'svcat_x', tokenType: 'Bearer', expiresIn: 3600, refreshToken: 'svcrt_x', personId: '', gatewaySlug: 'tools', gatewayId: 'gw' };
    await expect(check(grant)).rejects.toBeInstanceOf(GrantWithoutGateway);
    await expect(check({ ...grant, personId: 'p', gatewaySlug: '' })).rejects.toBeInstanceOf(GrantWithoutGateway);
    await expect(check({ ...grant, personId: 'p', gatewayId: '' })).rejects.toBeInstanceOf(GrantWithoutGateway);
  });

  it('answers a refresh 503 temporarily_unavailable and hands nothing over; the retry with the same refresh token succeeds once identity names them', async () => {
    await gateway('ga-skew-refresh');
    const frank = await member('grant-frank');
    const first = await tokensOf(await exchange(await codeFor(frank, 'ga-skew-refresh')));

    const logFrom = lines.length;
    await expectUnavailableForSkew(await skewedToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token }), logFrom);
    // Within the replay grace, the same refresh token is good at an edge over an identity of this version.
    const retried = await tokensOf(await refresh(first.refresh_token));
    expect(retried.refresh_token).not.toBe(first.refresh_token);
    expect((await connectionsOf(frank)).map((c) => c.gatewaySlug)).toEqual(['ga-skew-refresh']);
  });

  it('answers a code exchange 503 temporarily_unavailable and hands nothing over', async () => {
    await gateway('ga-skew-code');
    const grace = await member('grant-grace');
    const grant = await codeFor(grace, 'ga-skew-code');
    const logFrom = lines.length;
    await expectUnavailableForSkew(await skewedToken({ grant_type: 'authorization_code', code: grant.code, code_verifier: grant.verifier, redirect_uri: REDIRECT }), logFrom);
  });
});
