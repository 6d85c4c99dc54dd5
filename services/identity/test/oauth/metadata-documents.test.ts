import { randomUUID } from 'node:crypto';
import type { ServiceClients } from '@platform/runtime';
import { grpcClients, pkcePair, startTestPlatform, type TestPlatform } from '@platform/test';
import { documentFor, startMetadataServer } from './metadata-server';

/**
 * Client ID metadata documents fetched over https through the address guard (loopback allowed here through
 * ALLOWED_INTERNAL_NETWORKS; the self-signed certificate trusted through OUTBOUND_EXTRA_CA_FILE).
 */
describe('client ID metadata documents', () => {
  let server: Awaited<ReturnType<typeof startMetadataServer>>;
  let platform: TestPlatform;
  let clients: ServiceClients;
  let recovered = false;

  beforeAll(async () => {
    server = await startMetadataServer({
      '/good.json': (url) => ({ status: 200, headers: { 'cache-control': 'public, max-age=300' }, body: documentFor(url) }),
      '/cached.json': (url) => ({ status: 200, headers: { 'cache-control': 'max-age=5' }, body: documentFor(url) }),
      '/mismatch.json': () => ({ status: 200, body: documentFor('https://elsewhere.example/client.json') }),
      '/redirect.json': () => ({ status: 302, headers: { location: '/good.json' }, body: '' }),
      '/missing.json': () => ({ status: 404, body: '{}' }),
      '/large.json': (url) => ({ status: 200, body: documentFor(url, { padding: 'x'.repeat(17 * 1024) }) }),
      '/slow.json': (url) => ({ status: 200, body: documentFor(url), delayMs: 6_000 }),
      '/not-json.json': () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>hello</html>' }),
      '/secret.json': (url) => ({ status: 200, body: documentFor(url, { token_endpoint_auth_method: 'client_secret_basic' }) }),
      '/bad-redirect.json': (url) => ({ status: 200, body: documentFor(url, { redirect_uris: ['http://client.example/cb'] }) }),
      '/no-redirects.json': (url) => ({ status: 200, body: documentFor(url, { redirect_uris: [] }) }),
      '/failing.json': () => ({ status: 500, body: '' }),
      '/invalid.json': () => ({ status: 200, body: documentFor('https://elsewhere.example/client.json') }),
      '/recovering.json': (url) => (recovered ? { status: 200, body: documentFor(url) } : { status: 503, body: '' }),
      '/slow-failing.json': () => ({ status: 503, body: '', delayMs: 3_000 }),
      '/nul-name.json': (url) => ({ status: 200, body: documentFor(url, { client_name: 'a\u0000b' }) }),
      '/surrogate-name.json': (url) => ({ status: 200, body: documentFor(url, { client_name: 'a\ud800' }) }),
      '/nul-redirect.json': (url) => ({ status: 200, body: documentFor(url, { redirect_uris: ['https://client.example/c\u0000b'] }) }),
    });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', OUTBOUND_EXTRA_CA_FILE: server.caFile } });
    // A longer deadline than the 5 s fetch limit, so a slow document is the service's refusal, not a call timeout.
    clients = grpcClients(platform);
  }, 120_000);

  afterAll(async () => {
    await clients?.close();
    await platform?.stop();
    await server?.stop();
  });

  const resolve = (clientId: string) => clients.identity.resolveClient({ clientId });

  it('establishes a client from a good document: verified, not trusted until listed', async () => {
    const url = `${server.origin}/good.json`;
    const resolved = await resolve(url);
    expect(resolved.problem).toBe('');
    expect(resolved.client).toEqual({
      clientId: url,
      clientName: 'Metadata Client',
      clientUri: 'https://client.example/',
      logoUri: '',
      redirectUris: ['http://127.0.0.1:43110/callback', 'https://client.example/callback'],
      verified: true,
      trusted: false,
    });
    const context = { requestId: 'r', clientIp: '', actor: undefined, viaKind: '', viaName: '' };
    await clients.identity.setTrustedClients({ context, clientIds: [url] });
    expect((await resolve(url)).client?.trusted).toBe(true);

    await clients.identity.setTrustedClients({ context, clientIds: [] });
    expect((await resolve(url)).client?.trusted).toBe(false);
  });

  it('caches a document for its max-age: a second resolve does not fetch again', async () => {
    const url = `${server.origin}/good.json?cache=${randomUUID()}`;
    expect((await resolve(url)).client).toBeDefined();
    const before = server.hits.get('/good.json') ?? 0;
    for (let i = 0; i < 5; i += 1) expect((await resolve(url)).client?.clientId).toBe(url);
    expect(server.hits.get('/good.json')).toBe(before);
  });

  it('clamps a short max-age to one minute', async () => {
    const url = `${server.origin}/cached.json`;
    expect((await resolve(url)).client).toBeDefined();
    expect(server.hits.get('/cached.json')).toBe(1);
    // max-age=5 is raised to 60 s: still cached after the 5 s have passed.
    await new Promise((r) => setTimeout(r, 5_500));
    expect((await resolve(url)).client).toBeDefined();
    expect(server.hits.get('/cached.json')).toBe(1);
  }, 15_000);

  it.each([
    ['a client_id that differs from the URL', '/mismatch.json', /different client_id/],
    ['a redirect (3xx), not followed', '/redirect.json', /redirects/],
    ['a status other than 200', '/missing.json', /status 404/],
    ['a document over 16 KiB', '/large.json', /larger than 16 KiB/],
    ['a body that is not JSON', '/not-json.json', /not JSON/],
    ['a confidential client', '/secret.json', /token_endpoint_auth_method none/],
    ['an http redirect URI on a public host', '/bad-redirect.json', /redirect URI/],
    ['no redirect URIs', '/no-redirects.json', /no redirect_uris/],
    // Each would be stored with the code it issues, which PostgreSQL refuses: the document is invalid instead.
    ['a NUL in client_name', '/nul-name.json', /client_name must not contain NUL/],
    ['an unpaired surrogate in client_name', '/surrogate-name.json', /client_name must not contain NUL characters or unpaired surrogates/],
    ['a NUL in a redirect URI', '/nul-redirect.json', /redirect URI .* must not contain NUL/],
  ])('refuses %s', async (_label, pathname, problem) => {
    const resolved = await resolve(`${server.origin}${pathname}`);
    expect(resolved.client).toBeUndefined();
    expect(resolved.problem).toMatch(problem);
  });

  it('gives up on a document that takes longer than 5 seconds', async () => {
    // The document is valid and arrives after 6 s: a client here would mean the fetch waited for it.
    const resolved = await resolve(`${server.origin}/slow.json`);
    expect(resolved.client).toBeUndefined();
    expect(resolved.problem).toMatch(/within 5 seconds/);
  }, 15_000);

  // draft-ietf-oauth-client-id-metadata-document-02 §5.2: "MUST NOT cache error responses", nor invalid documents.
  it('never remembers a failed fetch or an invalid document: the next resolve fetches again', async () => {
    const failing = `${server.origin}/failing.json`;
    expect((await resolve(failing)).problem).toMatch(/status 500/);
    expect((await resolve(failing)).problem).toMatch(/status 500/);
    expect(server.hits.get('/failing.json')).toBe(2);

    const invalid = `${server.origin}/invalid.json`;
    expect((await resolve(invalid)).problem).toMatch(/different client_id/);
    expect((await resolve(invalid)).problem).toMatch(/different client_id/);
    expect(server.hits.get('/invalid.json')).toBe(2);

    // A host that was down serves its client as soon as it is back.
    const recovering = `${server.origin}/recovering.json`;
    expect((await resolve(recovering)).problem).toMatch(/status 503/);
    recovered = true;
    expect((await resolve(recovering)).client?.clientId).toBe(recovering);
  });

  it('shares one fetch between concurrent resolves of the same client_id, failing ones too', async () => {
    // The document answers after 3 s, far longer than sending five requests at once takes.
    const url = `${server.origin}/slow-failing.json`;
    const results = await Promise.all(Array.from({ length: 5 }, () => resolve(url)));
    for (const result of results) expect(result.problem).toMatch(/status 503/);
    expect(server.hits.get('/slow-failing.json')).toBe(1);
  }, 15_000);

  it('refuses a redirect URI the document does not list when issuing a code, and binds the code to the document client', async () => {
    const url = `${server.origin}/good.json`;
    const slug = `gw-${randomUUID().slice(0, 8)}`;
    const base = {
      context: undefined,
      redirectUriSent: true,
      clientId: url,
      codeChallenge: pkcePair().challenge,
      resource: `https://example.test/mcp/${slug}`,
      gatewayId: randomUUID(),
      gatewaySlug: slug,
      personId: randomUUID(),
      consent: 'allowed',
    };
    await expect(clients.identity.issueAuthorizationCode({ ...base, redirectUri: 'https://client.example/other' })).rejects.toMatchObject({ code: 'invalid_request' });
    // A listed URI passes the client checks and fails only on the (unknown) person.
    await expect(clients.identity.issueAuthorizationCode({ ...base, redirectUri: 'http://127.0.0.1:5999/callback' })).rejects.toMatchObject({ code: 'forbidden' });
  });
});
