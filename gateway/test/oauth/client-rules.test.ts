import { startHttpsServer, startTestPlatform, type HttpsTestServer, type TestPlatform } from '@platform/test';
import { fetchManual, json } from './support';

/**
 * Client rules (§4.1.2) through the edge: registration metadata identity must refuse with an RFC 7591 §3.2.2 error
 * (400) rather than fail on, and the shape of a client ID metadata document URL. A platform of its own: registration
 * allows 10 requests a minute per address (§8), which the protocol tests elsewhere already use.
 */
let platform: TestPlatform;
let host: HttpsTestServer;
/** The client_id the document at the metadata host's "/" names (set per test). */
let rootDocumentClientId = '';

beforeAll(async () => {
  host = await startHttpsServer();
  host.route('/', () => ({
    body: JSON.stringify({ client_id: rootDocumentClientId, client_name: 'Root Client', redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
  }));
  platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', OUTBOUND_EXTRA_CA_FILE: host.caFile } });
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await host?.stop();
});

function register(metadata: Record<string, unknown>): Promise<Response> {
  // JSON.stringify escapes a NUL or an unpaired surrogate (\u0000, \ud800), as a client's JSON would.
  return fetch(platform.url('/oauth/register'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
}

const redirect_uris = ['https://client.example/cb'];

describe('dynamic client registration', () => {
  it('a NUL or an unpaired surrogate in any member is invalid metadata (400), not a server error', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ client_name: 'a\u0000b', redirect_uris }, 'invalid_client_metadata'],
      [{ client_name: '\ud800', redirect_uris }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://client.example/c\u0000b'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://127.0.0.1:9/\udfff'] }, 'invalid_redirect_uri'],
      [{ client_uri: 'https://client.example/\u0000', redirect_uris }, 'invalid_client_metadata'],
      [{ logo_uri: 'https://client.example/\ud800.png', redirect_uris }, 'invalid_client_metadata'],
    ];
    for (const [metadata, error] of cases) {
      const response = await register(metadata);
      expect(response.status).toBe(400);
      expect(await json(response)).toEqual({ error, error_description: expect.stringMatching(/NUL characters or unpaired surrogates/) });
    }
    // A character outside the BMP (a surrogate pair) is text like any other.
    expect((await register({ client_name: 'Tool \u{1F527}', redirect_uris })).status).toBe(201);
  });

  it('a redirect URI must name its host as written: "https:///cb" (which the URL parser reads as host "cb") is refused', async () => {
    const response = await register({ redirect_uris: ['https:///cb'] });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ error: 'invalid_redirect_uri', error_description: expect.stringMatching(/must name a host/) });
  });
});

describe('client ID metadata document URLs', () => {
  const authorize = (clientId: string) =>
    fetchManual(platform.url(`/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code' }).toString()}`));

  it('must contain a path: "https://host" is refused without a fetch, while "https://host/" names a client', async () => {
    // The document even names the path-less URL, so only the path rule can refuse it.
    rootDocumentClientId = host.origin;
    for (const clientId of [host.origin, `${host.origin}?v=1`]) {
      const refused = await authorize(clientId);
      expect(refused.status).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      expect(await refused.text()).toMatch(/must contain a path/);
    }
    expect(host.hits.get('/') ?? 0).toBe(0);

    // "/" is a path (the draft only advises against it): the client is established, so the request's next problem
    // (no PKCE) is sent back to its redirect URI instead of a page.
    rootDocumentClientId = `${host.origin}/`;
    const established = await authorize(`${host.origin}/`);
    expect(established.status).toBe(302);
    expect(established.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/callback\?error=invalid_request&/);
    expect(host.hits.get('/')).toBe(1);
  });
});
