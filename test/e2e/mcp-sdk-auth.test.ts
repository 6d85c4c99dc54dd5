import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { authorizeAsPerson, freePort, gatewayUser, MemoryOAuthProvider, startTestPlatform, type GatewayUser, type TestPlatform } from '@platform/test';

/**
 * End to end with the MCP TypeScript SDK's OAuth client (`auth()` from @modelcontextprotocol/sdk): given only
 * the gateway's URL it must discover this authorization server (401 → RFC 9728 protected resource metadata →
 * RFC 8414 server metadata), register dynamically, authorize with PKCE and get tokens that the gateway accepts.
 */
let platform: TestPlatform;
let user: GatewayUser;
let appUrl: string;
let gatewayUrl: string;

const REDIRECT_URI = 'http://127.0.0.1:43119/oauth/callback';

beforeAll(async () => {
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  platform = await startTestPlatform({ env: { PORT: String(port), APP_URL: appUrl } });
  user = await gatewayUser(platform, { email: 'mcp-sdk@example.test', teamSlug: 'sdk-team', gatewaySlug: 'sdk-gw', gatewayName: 'SDK Gateway' });
  gatewayUrl = `${appUrl}/mcp/${user.gatewaySlug}`;
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

/** The person's browser: follows the SDK's authorization URL with the session, consents, returns the code. */
async function consentAndGetCode(provider: MemoryOAuthProvider): Promise<string> {
  const url = provider.authorizationUrl!;
  expect(url.origin + url.pathname).toBe(`${appUrl}/oauth/authorize`);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toBe(gatewayUrl);
  const { redirect, consentPage } = await authorizeAsPerson(platform, user.person.client.cookieHeader(), url);
  expect(consentPage).toContain('MCP SDK e2e');
  expect(consentPage).toContain('Unverified');
  expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
  expect(redirect.searchParams.get('state')).toBe(provider.sentState);
  expect(redirect.searchParams.get('iss')).toBe(appUrl);
  expect(redirect.searchParams.get('error')).toBeNull();
  return redirect.searchParams.get('code')!;
}

test('auth() discovers the server from the gateway URL, registers, authorizes with PKCE and gets working tokens', async () => {
  // What an MCP client meets first: the gateway refuses it and names its protected resource metadata.
  const first = await fetch(gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  expect(first.status).toBe(401);
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(first);
  expect(resourceMetadataUrl?.href).toBe(`${appUrl}/.well-known/oauth-protected-resource/mcp/${user.gatewaySlug}`);

  const provider = new MemoryOAuthProvider(REDIRECT_URI);
  expect(await auth(provider, { serverUrl: gatewayUrl, resourceMetadataUrl: resourceMetadataUrl! })).toBe('REDIRECT');
  expect(provider.client?.client_id).toMatch(/^svccl_/);
  const code = await consentAndGetCode(provider);

  expect(await auth(provider, { serverUrl: gatewayUrl, resourceMetadataUrl: resourceMetadataUrl!, authorizationCode: code })).toBe('AUTHORIZED');
  expect(provider.stored?.access_token).toMatch(/^svcat_/);
  expect(provider.stored?.refresh_token).toMatch(/^svcrt_/);
  expect(provider.stored?.token_type.toLowerCase()).toBe('bearer');

  // The token passes the gateway's check: the data plane answers (here: a request without a session is a 400).
  const call = await fetch(gatewayUrl, { method: 'POST', headers: { authorization: `Bearer ${provider.stored!.access_token}`, 'content-type': 'application/json' }, body: '{}' });
  expect(call.status).toBe(400);
  expect(await call.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/Mcp-Session-Id/) } });

  // With tokens stored, auth() refreshes through the same discovery (a rotated pair).
  const before = provider.stored!;
  expect(await auth(provider, { serverUrl: gatewayUrl })).toBe('AUTHORIZED');
  expect(provider.stored!.refresh_token).not.toBe(before.refresh_token);
});

test('the SDK transport: 401 on connect → auth() → finishAuth(code) → requests carry a token the gateway accepts', async () => {
  const provider = new MemoryOAuthProvider(REDIRECT_URI);
  const transport = new StreamableHTTPClientTransport(new URL(gatewayUrl), { authProvider: provider });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await expect(client.connect(transport)).rejects.toThrow(/unauthorized/i);
  expect(provider.authorizationUrl).toBeDefined();
  await transport.finishAuth(await consentAndGetCode(provider));
  expect(provider.stored?.access_token).toMatch(/^svcat_/);

  // A fresh transport with the stored token connects to the gateway (an MCP server with nothing approved yet).
  const connected = new StreamableHTTPClientTransport(new URL(gatewayUrl), { authProvider: provider });
  const connectedClient = new Client({ name: 'e2e', version: '1.0.0' });
  await connectedClient.connect(connected);
  expect(connectedClient.getServerVersion()).toMatchObject({ name: user.gatewaySlug, title: 'SDK Gateway' });
  expect((await connectedClient.listTools()).tools).toEqual([]);
  await connected.close().catch(() => undefined);
  await transport.close().catch(() => undefined);
});
