import { adminClient, newPerson, pkcePair, startTestPlatform, type ApiClient, type TestPerson, type TestPlatform } from '@platform/test';
import { fetchManual, form, json, startMetadataHost, type MetadataHost } from './support';

/**
 * The OAuth 2.1 authorization server through real HTTP on a whole platform: discovery, authorize (every rule of
 * §4.1.1), consent, token, registration, revocation, the /mcp resource-server check and connected apps.
 */
let platform: TestPlatform;
let host: MetadataHost;
let appUrl: string;
let admin: ApiClient;
let alice: TestPerson;
let dynamicClientId: string;
let trustedClientId: string;
const REDIRECT = 'http://127.0.0.1:9/callback';
const TEAM = 'oauth-team';

beforeAll(async () => {
  host = await startMetadataHost();
  trustedClientId = host.publish('/trusted.json', (clientId) => ({
    client_id: clientId,
    client_name: 'Trusted Tool',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
  }));
  platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', OUTBOUND_EXTRA_CA_FILE: host.certFile } });
  appUrl = platform.env.APP_URL ?? platform.platform.context.config.env.APP_URL;
  admin = await adminClient(platform);
  expect((await admin.post('/v1/teams', { slug: TEAM, name: 'OAuth team' })).status).toBe(201);
  expect((await admin.post('/v1/teams', { slug: 'other-team', name: 'Other' })).status).toBe(201);
  for (const [team, slug, name] of [[TEAM, 'g1', 'Gateway One'], [TEAM, 'g2', 'Gateway Two'], ['other-team', 'g-other', 'Not yours']]) {
    const created = await admin.post(`/v1/teams/${team}/gateways`, { slug, name });
    expect(created.status).toBe(201);
  }
  alice = await newPerson(platform, admin, { email: 'alice@example.test', displayName: 'alice', password: 'a long enough password 123' });
  expect((await admin.post(`/v1/teams/${TEAM}/members`, { personId: alice.id, role: 'member' })).status).toBe(201);
  const registered = await fetchManual(platform.url('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Dyn <Client>', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  expect(registered.status).toBe(201);
  dynamicClientId = (await json(registered)).client_id;
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await host?.close();
});

function authorizeParams(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: dynamicClientId,
    redirect_uri: REDIRECT,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    resource: `${appUrl}/mcp/g1`,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
}

function authorize(params: Record<string, string> | string, cookie?: string): Promise<Response> {
  const query = typeof params === 'string' ? params : new URLSearchParams(params).toString();
  return fetchManual(platform.url(`/oauth/authorize?${query}`), cookie ? { headers: { cookie } } : {});
}

function redirectParams(response: Response, redirect = REDIRECT): URLSearchParams {
  const location = response.headers.get('location')!;
  expect(location.startsWith(`${redirect}?`)).toBe(true);
  return new URL(location).searchParams;
}

/** The hidden fields of the consent page's form. */
function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1]!] = match[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return fields;
}

function consentPost(fields: Record<string, string>, cookie: string, origin = platform.origin): Promise<Response> {
  const init = form(fields);
  return fetchManual(platform.url('/oauth/authorize'), { ...init, headers: { ...(init.headers as Record<string, string>), cookie, origin } });
}

async function exchange(code: string, verifier: string, clientId = dynamicClientId, redirectUri = REDIRECT): Promise<Response> {
  return fetchManual(platform.url('/oauth/token'), form({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }));
}

/** The code an authorize answer leads to for alice: at once (302), or through the consent page (Allow). */
async function codeFrom(response: Response, redirect = REDIRECT): Promise<string> {
  if (response.status === 302) return redirectParams(response, redirect).get('code')!;
  expect(response.status).toBe(200);
  const allowed = await consentPost({ ...formFields(await response.text()), decision: 'allow' }, alice.client.cookieHeader());
  expect(allowed.status).toBe(303);
  return redirectParams(allowed, redirect).get('code')!;
}

/** Runs authorize → consent (Allow) → token for alice on a gateway; returns the tokens. */
async function connect(slug: string, clientId = dynamicClientId): Promise<{ access_token: string; refresh_token: string }> {
  const { verifier, challenge } = pkcePair();
  const page = await authorize(authorizeParams({ client_id: clientId, code_challenge: challenge, resource: `${appUrl}/mcp/${slug}` }), alice.client.cookieHeader());
  const tokens = await exchange(await codeFrom(page), verifier, clientId);
  expect(tokens.status).toBe(200);
  return json(tokens);
}

/** A new dynamic registration with the test's redirect URI, so a test starts with nothing remembered for it. */
async function registerClient(name: string): Promise<string> {
  const registered = await fetchManual(platform.url('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT] }),
  });
  expect(registered.status).toBe(201);
  return (await json(registered)).client_id;
}


describe('discovery', () => {
  it('serves the authorization server metadata exactly, issuer byte for byte, no scopes', async () => {
    const response = await fetch(platform.url('/.well-known/oauth-authorization-server'));
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const body = await json(response);
    expect(body.issuer).toBe(appUrl);
    expect(body).toEqual({
      issuer: appUrl,
      authorization_endpoint: `${appUrl}/oauth/authorize`,
      token_endpoint: `${appUrl}/oauth/token`,
      registration_endpoint: `${appUrl}/oauth/register`,
      revocation_endpoint: `${appUrl}/oauth/revoke`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect('scopes_supported' in body).toBe(false);
  });

  it('serves protected-resource metadata for any well-formed slug and 404 for a malformed one', async () => {
    const response = await fetch(platform.url('/.well-known/oauth-protected-resource/mcp/no-such-gateway'));
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await json(response)).toEqual({
      resource: `${appUrl}/mcp/no-such-gateway`,
      authorization_servers: [appUrl],
      bearer_methods_supported: ['header'],
      resource_name: platform.platform.context.config.env.INSTANCE_NAME,
    });
    for (const bad of ['Bad_Slug', '-x', 'x-', 'a'.repeat(64)]) {
      expect((await fetch(platform.url(`/.well-known/oauth-protected-resource/mcp/${bad}`))).status).toBe(404);
    }
  });
});

describe('authorize: problems before the client is established render a page and never redirect', () => {
  const expectErrorPage = async (response: Response) => {
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await response.text()).toMatch(/<title>Could not connect/);
  };

  it('unknown client', async () => expectErrorPage(await authorize(authorizeParams({ client_id: 'svccl_unknown' }))));
  it('unfetchable metadata document', async () =>
    expectErrorPage(await authorize(authorizeParams({ client_id: `${host.origin}/missing.json` }))));
  it('unregistered redirect URI', async () =>
    expectErrorPage(await authorize(authorizeParams({ redirect_uri: 'http://127.0.0.1:9/other' }))));
  it('a repeated parameter', async () =>
    expectErrorPage(await authorize(`${new URLSearchParams(authorizeParams()).toString()}&state=again`)));
  it('a query over 8,000 characters', async () =>
    expectErrorPage(await authorize(authorizeParams({ padding: 'x'.repeat(8_000) }))));
});

describe('authorize: later problems redirect with error, state and iss', () => {
  const cases: Array<[string, Record<string, string | undefined>, string]> = [
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no PKCE', { code_challenge: undefined }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['state over 1,000 characters', { state: 's'.repeat(1_001) }, 'invalid_request'],
    ['no resource', { resource: undefined }, 'invalid_target'],
    ['another resource', { resource: 'https://elsewhere.example/mcp/g1' }, 'invalid_target'],
    ['a resource with a trailing slash', { resource: `${appUrl}/mcp/g1/` }, 'invalid_target'],
    ['a resource with dot segments', { resource: `${appUrl}/x/../mcp/g1` }, 'invalid_target'],
  ];
  it.each(cases)('%s', async (_name, overrides, error) => {
    const response = await authorize(authorizeParams(overrides));
    expect(response.status).toBe(302);
    const params = redirectParams(response);
    expect(params.get('error')).toBe(error);
    expect(params.get('state')).toBe(overrides.state ?? 'st-123');
    expect(params.get('iss')).toBe(appUrl);
    expect(params.get('code')).toBeNull();
  });

  it('uses the only registered redirect URI when none is given', async () => {
    const response = await authorize(authorizeParams({ redirect_uri: undefined, response_type: 'token' }));
    expect(redirectParams(response).get('error')).toBe('unsupported_response_type');
  });

  it('refuses a gateway the signed-in person may not use (invalid_target), alike for unknown ones', async () => {
    for (const slug of ['g-other', 'never-created']) {
      const response = await authorize(authorizeParams({ resource: `${appUrl}/mcp/${slug}` }), alice.client.cookieHeader());
      expect(response.status).toBe(302);
      expect(redirectParams(response).get('error')).toBe('invalid_target');
      expect(redirectParams(response).get('iss')).toBe(appUrl);
    }
  });
});

describe('authorize: sign-in, consent and codes', () => {
  it('sends a person who is not signed in to the sign-in page and back', async () => {
    const params = authorizeParams();
    const response = await authorize(params);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!, 'http://x');
    expect(location.pathname).toBe('/sign-in');
    const returnTo = location.searchParams.get('return_to')!;
    expect(returnTo).toBe(`/oauth/authorize?${new URLSearchParams(params).toString()}`);

    const signInPage = await fetchManual(platform.url(`/sign-in?return_to=${encodeURIComponent(returnTo)}`));
    const csrfCookie = signInPage.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await signInPage.text())![1]!;
    const init = form({ csrf, email: 'alice@example.test', password: 'a long enough password 123' });
    const signedIn = await fetchManual(platform.url(`/sign-in?return_to=${encodeURIComponent(returnTo)}`), {
      ...init,
      headers: { ...(init.headers as Record<string, string>), cookie: csrfCookie, origin: platform.origin },
    });
    // A page that continues there, not a 303 (Chromium would hold that redirect to the sign-in page's form-action).
    expect(signedIn.status).toBe(200);
    expect(await signedIn.text()).toContain(`<meta http-equiv="refresh" content="0; url=${returnTo.replace(/&/g, '&amp;')}">`);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith('platform_session='))!.split(';')[0]!;
    const back = await fetchManual(platform.url(returnTo), { headers: { cookie: session } });
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('Gateway One');
  });

  it('shows the consent page with the client, its verification, the redirect host and the gateway', async () => {
    const response = await authorize(authorizeParams({ resource: `${appUrl}/mcp/g2` }), alice.client.cookieHeader());
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Dyn &lt;Client&gt;');
    expect(html).not.toContain('Dyn <Client>');
    expect(html).toContain('Unverified');
    expect(html).toContain('127.0.0.1:9');
    expect(html).toContain('Gateway Two (g2)');
    expect(html).toMatch(/value="allow"/);
    expect(html).toMatch(/value="deny"/);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:9; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
  });

  it('warns that a loopback redirect URI may be any program on the computer, even for a verified client', async () => {
    // MCP authorization, Localhost Redirect URI Risks: anyone may name a verified client's document and a port of their own.
    const loopbackTool = host.publish('/loopback-tool.json', (clientId) => ({ client_id: clientId, client_name: 'Loopback Tool', redirect_uris: [REDIRECT] }));
    const webTool = host.publish('/web-tool.json', (clientId) => ({ client_id: clientId, client_name: 'Web Tool', redirect_uris: ['https://tool.example/callback'] }));
    const resource = `${appUrl}/mcp/g2`;

    const loopback = await authorize(authorizeParams({ client_id: loopbackTool, redirect_uri: 'http://127.0.0.1:5555/callback', resource }), alice.client.cookieHeader());
    expect(loopback.status).toBe(200);
    const loopbackHtml = await loopback.text();
    expect(loopbackHtml).toContain('Verified');
    expect(loopbackHtml).toContain('goes to <strong>127.0.0.1:5555</strong>, an address on your own computer where any program could be listening');

    const web = await authorize(authorizeParams({ client_id: webTool, redirect_uri: 'https://tool.example/callback', resource }), alice.client.cookieHeader());
    expect(web.status).toBe(200);
    const webHtml = await web.text();
    expect(webHtml).toContain('tool.example');
    expect(webHtml).not.toContain('an address on your own computer');
  });

  it('Deny sends access_denied with state and iss', async () => {
    const page = await authorize(authorizeParams({ resource: `${appUrl}/mcp/g2` }), alice.client.cookieHeader());
    const denied = await consentPost({ ...formFields(await page.text()), decision: 'deny' }, alice.client.cookieHeader());
    expect(denied.status).toBe(303);
    const params = redirectParams(denied);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('st-123');
    expect(params.get('iss')).toBe(appUrl);
  });

  it('refuses a consent POST without the right CSRF token or from another origin, without redirecting', async () => {
    const page = await authorize(authorizeParams({ resource: `${appUrl}/mcp/g2` }), alice.client.cookieHeader());
    const fields = formFields(await page.text());
    const forged = await consentPost({ ...fields, csrf: 'forged', decision: 'allow' }, alice.client.cookieHeader());
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    const crossOrigin = await consentPost({ ...fields, decision: 'allow' }, alice.client.cookieHeader(), 'https://evil.example');
    expect(crossOrigin.status).toBe(403);
    // A hidden field changed on the way back fails the CSRF binding too.
    const tampered = await consentPost({ ...fields, code_challenge: pkcePair().challenge, decision: 'allow' }, alice.client.cookieHeader());
    expect(tampered.status).toBe(403);
  });

  it('Allow issues a code that the token endpoint exchanges; then consent is remembered', async () => {
    const { verifier, challenge } = pkcePair();
    const page = await authorize(authorizeParams({ code_challenge: challenge }), alice.client.cookieHeader());
    expect(page.status).toBe(200);
    const allowed = await consentPost({ ...formFields(await page.text()), decision: 'allow' }, alice.client.cookieHeader());
    expect(allowed.status).toBe(303);
    const params = redirectParams(allowed);
    expect(params.get('state')).toBe('st-123');
    expect(params.get('iss')).toBe(appUrl);
    const tokens = await exchange(params.get('code')!, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.headers.get('pragma')).toBe('no-cache');
    const body = await json(tokens);
    expect(body).toEqual({ access_token: expect.stringMatching(/^svcat_/), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String) });

    const again = await authorize(authorizeParams(), alice.client.cookieHeader());
    expect(again.status).toBe(302);
    expect(redirectParams(again).get('code')).toBeTruthy();
    expect(redirectParams(again).get('iss')).toBe(appUrl);
  });

  it('a loopback redirect URI may name any port at the request; the token request must repeat that URI', async () => {
    // Registered as http://127.0.0.1:9/callback; a native app listens on whatever port it got (RFC 8252 §7.3).
    const otherPort = 'http://127.0.0.1:5555/callback';
    const { verifier, challenge } = pkcePair();
    const page = await authorize(authorizeParams({ redirect_uri: otherPort, code_challenge: challenge }), alice.client.cookieHeader());
    const code = await codeFrom(page, otherPort);
    // The code is bound to the port it was issued for: the registered one does not match, and is not burned.
    const registeredPort = await exchange(code, verifier);
    expect(registeredPort.status).toBe(400);
    expect((await json(registeredPort)).error).toBe('invalid_grant');
    expect((await exchange(code, verifier, dynamicClientId, otherPort)).status).toBe(200);

    // Only the port may differ, and only for http loopback: another path, host or scheme is still the rule-6 page.
    for (const redirect of ['http://127.0.0.1:5555/other', 'http://127.0.0.2:5555/callback', 'http://localhost:9/callback', 'https://127.0.0.1:9/callback']) {
      const refused = await authorize(authorizeParams({ redirect_uri: redirect }), alice.client.cookieHeader());
      expect(refused.status).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
    }
  });

  it('a trusted metadata-document client skips the consent page', async () => {
    const set = await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: [trustedClientId] });
    expect(set.status).toBe(200);
    expect(set.body.data.clientIds).toEqual([trustedClientId]);
    expect((await admin.get('/v1/admin/oauth/trusted-clients')).body.data.clientIds).toEqual([trustedClientId]);
    const { verifier, challenge } = pkcePair();
    const response = await authorize(authorizeParams({ client_id: trustedClientId, code_challenge: challenge, resource: `${appUrl}/mcp/g2` }), alice.client.cookieHeader());
    expect(response.status).toBe(302);
    const code = redirectParams(response).get('code')!;
    expect((await exchange(code, verifier, trustedClientId)).status).toBe(200);
    expect((await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: ['svccl_x'] })).status).toBe(400);
  });

  it('the trusted list holds up to 200 clients, the edge and identity agreeing', async () => {
    const urls = (count: number) => Array.from({ length: count }, (_, i) => `https://trusted.example/c${String(i).padStart(3, '0')}.json`);
    const set = await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: urls(150) });
    expect(set.status).toBe(200);
    expect(set.body.data.clientIds).toHaveLength(150);
    expect((await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: urls(200) })).status).toBe(200);
    expect((await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: urls(201) })).status).toBe(400);
    expect((await admin.get('/v1/admin/oauth/trusted-clients')).body.data.clientIds).toEqual(urls(200));
    expect((await admin.put('/v1/admin/oauth/trusted-clients', { clientIds: [] })).status).toBe(200);
  });
});

describe('token, register and revoke endpoints', () => {
  it('answer GET with 405 and Allow: POST', async () => {
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke']) {
      const response = await fetch(platform.url(path));
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect((await json(response)).error).toBe('method_not_allowed');
    }
  });

  it('answer CORS preflights for any origin', async () => {
    const response = await fetch(platform.url('/oauth/token'), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('token: form bodies only, RFC 6749 errors, no client authentication, known grants only', async () => {
    const jsonBody = await fetch(platform.url('/oauth/token'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"refresh_token"}' });
    expect(jsonBody.status).toBe(400);
    expect((await json(jsonBody)).error).toBe('invalid_request');

    const secret = await fetch(platform.url('/oauth/token'), form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: dynamicClientId, client_secret: 's' }));
    expect(secret.status).toBe(400);
    expect((await json(secret)).error).toBe('invalid_client');

    const password = await fetch(platform.url('/oauth/token'), form({ grant_type: 'password', username: 'a', password: 'b' }));
    expect(password.status).toBe(400);
    expect(password.headers.get('cache-control')).toBe('no-store');
    const body = await json(password);
    expect(body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });

    const repeated = await fetch(platform.url('/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&grant_type=refresh_token&refresh_token=x&client_id=y',
    });
    expect((await json(repeated)).error).toBe('invalid_request');

    const badCode = await exchange('not-a-code', pkcePair().verifier);
    expect(badCode.status).toBe(400);
    expect((await json(badCode)).error).toBe('invalid_grant');
  });

  it('token: resource is compared as authorize compared it, at the code exchange and at refresh (RFC 8707 §2)', async () => {
    // Authorize accepts the gateway's resource with the scheme and host in another case; so must the token requests.
    const app = new URL(appUrl);
    const resource = `${app.protocol.toUpperCase()}//${app.host.toUpperCase()}/mcp/g1`;
    const { verifier, challenge } = pkcePair();
    const code = await codeFrom(await authorize(authorizeParams({ code_challenge: challenge, resource }), alice.client.cookieHeader()));
    const common = { client_id: dynamicClientId, resource };
    const tokens = await fetchManual(platform.url('/oauth/token'), form({ ...common, grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }));
    expect(tokens.status).toBe(200);
    const { refresh_token } = await json(tokens);
    const refreshed = await fetchManual(platform.url('/oauth/token'), form({ ...common, grant_type: 'refresh_token', refresh_token }));
    expect(refreshed.status).toBe(200);
    // Another gateway is still another resource.
    const elsewhere = await fetchManual(platform.url('/oauth/token'), form({ ...common, grant_type: 'refresh_token', refresh_token: (await json(refreshed)).refresh_token, resource: `${appUrl}/mcp/g2` }));
    expect((await json(elsewhere)).error).toBe('invalid_target');
  });

  // RFC 6749 §5.2: client authentication through the Authorization header is answered 401 with a challenge naming
  // the scheme the client used; credentials in the body (or a header naming no scheme) get 400, which §5.2 allows.
  it.each([
    ['/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x' }],
    ['/oauth/revoke', { token: 'svcrt_x' }],
  ])('%s refuses client authentication with invalid_client, a 401 always carrying a matching challenge', async (path, params) => {
    const withAuthorization = (authorization: string) =>
      fetch(platform.url(path), { ...form({ ...params, client_id: dynamicClientId }), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization } });
    for (const [authorization, challenge] of [
      [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Basic realm="oauth"'],
      ['bearer x', 'Bearer realm="oauth"'],
      ['Bearer x', 'Bearer realm="oauth"'],
      ['DPoP x', 'DPoP realm="oauth"'],
    ]) {
      const response = await withAuthorization(authorization!);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(challenge);
      expect((await json(response)).error).toBe('invalid_client');
    }
    const noScheme = await withAuthorization('"quoted" x');
    expect(noScheme.status).toBe(400);
    expect((await json(noScheme)).error).toBe('invalid_client');
    const bodyCredentials: Array<Record<string, string>> = [
      { client_secret: 's' },
      { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: 'x.y.z' },
    ];
    for (const credential of bodyCredentials) {
      const inBody = await fetch(platform.url(path), form({ ...params, client_id: dynamicClientId, ...credential }));
      expect(inBody.status).toBe(400);
      expect(inBody.headers.get('www-authenticate')).toBeNull();
      expect((await json(inBody)).error).toBe('invalid_client');
    }
  });

  it('register: 201 echoing redirect_uris, 400 with an RFC 7591 error', async () => {
    const ok = await fetch(platform.url('/oauth/register'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Another', redirect_uris: ['https://client.example/cb'] }),
    });
    expect(ok.status).toBe(201);
    const registered = await json(ok);
    expect(registered.client_id).toMatch(/^svccl_/);
    expect(registered.redirect_uris).toEqual(['https://client.example/cb']);

    const bad = await fetch(platform.url('/oauth/register'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://client.example/cb'] }),
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toBe('invalid_redirect_uri');
  });

  it('revoke: 200 with an empty body for an unknown token; 400 without a token', async () => {
    const unknown = await fetch(platform.url('/oauth/revoke'), form({ token: 'svcrt_unknown', client_id: dynamicClientId }));
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toBe('');
    const missing = await fetch(platform.url('/oauth/revoke'), form({ client_id: dynamicClientId }));
    expect(missing.status).toBe(400);
    expect((await json(missing)).error).toBe('invalid_request');
  });
});

describe('/mcp/{slug} resource-server check', () => {
  const metadata = (slug: string) => `${appUrl.replace(/\/$/, '')}/.well-known/oauth-protected-resource/mcp/${slug}`;

  it('401 without a token, with the resource metadata address', async () => {
    const response = await fetch(platform.url('/mcp/g1'), { method: 'POST' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata('g1')}"`);
  });

  const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

  it('401 invalid_token for an unknown token, and for a token of another gateway', async () => {
    const unknown = await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: 'Bearer svcat_unknown' } });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata('g1')}", error="invalid_token"`);
    const tokens = await connect('g1');
    // Past the check the data plane answers: a ping without a session is its 400, not the check's 401/404.
    const accepted = await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, body: PING });
    expect(accepted.status).toBe(400);
    expect(await json(accepted)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/Mcp-Session-Id/) } });
    const elsewhere = await fetch(platform.url('/mcp/g2'), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata('g2')}", error="invalid_token"`);
    // The management API never accepts them.
    expect((await fetch(platform.url('/v1/me'), { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it('401 invalid_token for an API key, saying that gateways take OAuth access tokens', async () => {
    const created = await alice.client.post(`/v1/teams/${TEAM}/api-keys`, { name: 'script', scopes: ['query'], kind: 'personal' });
    expect(created.status).toBe(201);
    const key: string = created.body.data.key;
    const refused = await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: PING });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata('g1')}", error="invalid_token"`);
    const { error } = await json(refused);
    expect(error).toMatchObject({ code: 'unauthenticated', message: expect.stringMatching(/API keys are not accepted.*OAuth access token/) });
    expect(error.message).not.toContain(key.slice(4));
  });

  it('404 for a malformed slug', async () => {
    expect((await fetch(platform.url('/mcp/Bad_Slug'), { method: 'POST' })).status).toBe(404);
  });

  it('connected apps: listed, shown on the page, and disconnecting ends the token', async () => {
    const tokens = await connect('g1');
    const listed = await alice.client.get('/v1/me/connections');
    expect(listed.status).toBe(200);
    const connection = listed.body.data.find((c: { gatewaySlug: string }) => c.gatewaySlug === 'g1');
    expect(connection).toMatchObject({ clientId: dynamicClientId, clientVerified: false, personId: alice.id });
    expect((await admin.get(`/v1/admin/people/${alice.id}/connections`)).body.data.length).toBe(listed.body.data.length);

    const page = await fetchManual(platform.url('/account/connected-apps'), { headers: { cookie: alice.client.cookieHeader() } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Disconnect');
    expect((await fetchManual(platform.url('/account/connected-apps'))).status).toBe(303);

    for (const c of listed.body.data) expect((await alice.client.delete(`/v1/me/connections/${c.id}`)).status).toBe(204);
    const after = await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(after.status).toBe(401);
  });

  it.each([
    ['the person', (connectionId: string) => alice.client.delete(`/v1/me/connections/${connectionId}`)],
    ['a platform admin', (connectionId: string) => admin.delete(`/v1/admin/people/${alice.id}/connections/${connectionId}`)],
  ])('disconnected by %s, an app must ask for consent again', async (_who, disconnect) => {
    const clientId = await registerClient('Reconnecting App');
    const resource = `${appUrl}/mcp/g2`;
    await connect('g2', clientId);
    // Consent is remembered while connected: a code at once.
    expect((await authorize(authorizeParams({ client_id: clientId, resource }), alice.client.cookieHeader())).status).toBe(302);
    const listed = await alice.client.get('/v1/me/connections');
    const connection = listed.body.data.find((c: { clientId: string }) => c.clientId === clientId);
    expect((await disconnect(connection.id)).status).toBe(204);

    const again = await authorize(authorizeParams({ client_id: clientId, resource }), alice.client.cookieHeader());
    expect(again.status).toBe(200);
    expect(await again.text()).toMatch(/value="allow"/);
  });

  it('404 once the person is removed from the gateway team', async () => {
    const tokens = await connect('g1');
    expect((await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, body: PING })).status).toBe(400);
    expect((await admin.delete(`/v1/teams/${TEAM}/members/${alice.id}`)).status).toBe(204);
    const removed = await fetch(platform.url('/mcp/g1'), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(removed.status).toBe(404);
  });
});
