import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { unique } from './fixtures';
import type { ApiClient, ApiResponse } from './http-client';
import { authorizeAsPerson, gatewayUser, pkcePair } from './oauth-browser';
import type { TestPlatform } from './platform';

/**
 * Fixtures for tests of the `/mcp/{slug}` data plane: a person's OAuth access token for a gateway (the real
 * register → authorize → consent → token flow), an upstream registered, discovered and published through the
 * real API, and an SDK client connected to the gateway.
 */

const REDIRECT = 'http://127.0.0.1/callback';

function expectStatus(response: ApiResponse, status: number, what: string): ApiResponse {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response;
}

/** An access token (`svcat_…`) of the signed-in person (`cookie`) for the gateway `slug`. */
export async function gatewayAccessToken(platform: TestPlatform, cookie: string, slug: string, clientName = 'Test MCP client'): Promise<string> {
  return (await gatewayTokens(platform, cookie, slug, clientName)).accessToken;
}

/** The tokens the code flow gives the signed-in person (`cookie`) for the gateway `slug`, with the client that got them. */
export async function gatewayTokens(
  platform: TestPlatform,
  cookie: string,
  slug: string,
  clientName = 'Test MCP client',
): Promise<{ accessToken: string; refreshToken: string; clientId: string }> {
  const registered = await fetch(platform.url('/oauth/register'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${await registered.text()}`);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkcePair();
  const authorize = new URL(platform.url('/oauth/authorize'));
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'state-1',
    resource: `${platform.appUrl}/mcp/${slug}`,
  })) {
    authorize.searchParams.set(name, value);
  }
  const { redirect } = await authorizeAsPerson(platform, cookie, authorize);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`authorize did not give a code: ${redirect.toString()}`);
  const token = await fetch(platform.url('/oauth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }).toString(),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${await token.text()}`);
  const tokens = (await token.json()) as { access_token: string; refresh_token: string };
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, clientId };
}

/**
 * Registers `url` as an MCP server of `team`, discovers its capabilities and publishes it (the caller must be allowed
 * to publish directly: a team owner under `self_publish`, or a platform admin reviewing). Returns the server id.
 */
export async function publishedMcpServer(
  client: ApiClient,
  team: string,
  options: { slug: string; url: string; transport?: 'streamable-http' | 'sse'; sendIdentity?: boolean; capturePayloads?: boolean; timeoutSeconds?: number; authValue?: string },
  reviewer?: ApiClient,
): Promise<string> {
  const created = expectStatus(
    await client.post(`/v1/teams/${team}/mcp-servers`, {
      name: `Server ${options.slug}`,
      slug: options.slug,
      url: options.url,
      ...(options.transport !== undefined ? { transport: options.transport } : {}),
      ...(options.sendIdentity !== undefined ? { sendIdentity: options.sendIdentity } : {}),
      ...(options.capturePayloads !== undefined ? { capturePayloads: options.capturePayloads } : {}),
      ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
      ...(options.authValue !== undefined ? { authValue: options.authValue } : {}),
    }),
    201,
    'register MCP server',
  );
  const serverId = created.body.data.id as string;
  expectStatus(await client.post(`/v1/teams/${team}/mcp-servers/${serverId}/refresh`, {}), 200, 'refresh');
  const published = await client.post(`/v1/teams/${team}/mcp-servers/${serverId}/publish`, {});
  if (published.status !== 200) throw new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`);
  if (published.body.data.publishState === 'pending') {
    if (!reviewer) throw new Error('the server waits for review and no reviewer was given');
    expectStatus(await reviewer.post(`/v1/admin/mcp-servers/${serverId}/review`, { decision: 'approve' }), 200, 'review');
  }
  return serverId;
}

/** Sets the gateway's servers (in order, with optional prefixes). */
export async function setGatewayServers(client: ApiClient, team: string, gatewaySlug: string, servers: { serverId: string; prefix?: string }[]): Promise<void> {
  const current = expectStatus(await client.get(`/v1/teams/${team}/gateways/${gatewaySlug}`), 200, 'read gateway');
  const gatewayId = current.body.data.id as string;
  expectStatus(
    await client.patch(`/v1/teams/${team}/gateways/${gatewayId}`, { servers }, { 'if-match': `"${current.body.data.revision}"` }),
    200,
    'set gateway servers',
  );
}

/** An SDK client connected to `/mcp/{slug}` with a bearer token (no OAuth provider: the token is already known). */
export async function connectMcpClient(
  platform: TestPlatform,
  slug: string,
  token: string,
  options: { name?: string; capabilities?: Record<string, unknown> } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: options.name ?? 'gateway-test-client', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  const transport = new StreamableHTTPClientTransport(new URL(platform.url(`/mcp/${slug}`)), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** A gateway of its own team, its owner's API client and an access token for it. */
export interface FrontedGateway {
  owner: ApiClient;
  teamSlug: string;
  gatewaySlug: string;
  /** The servers' ids, in the order given. */
  serverIds: string[];
  token: string;
}

/**
 * A new person owning a new team whose gateway fronts `servers` (each registered, discovered and published, which
 * needs MCP_PUBLISH_POLICY=self_publish), with an access token for the gateway. `label` names the team and gateway.
 */
export async function gatewayFronting(platform: TestPlatform, label: string, servers: Parameters<typeof publishedMcpServer>[2][]): Promise<FrontedGateway> {
  const teamSlug = unique(`${label}-team`);
  const gatewaySlug = unique(`${label}-gw`);
  const user = await gatewayUser(platform, { email: `${unique(label)}@example.test`, teamSlug, gatewaySlug });
  const owner = user.person.client;
  const serverIds: string[] = [];
  for (const server of servers) serverIds.push(await publishedMcpServer(owner, teamSlug, server));
  await setGatewayServers(owner, teamSlug, gatewaySlug, serverIds.map((serverId) => ({ serverId })));
  const token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug);
  return { owner, teamSlug, gatewaySlug, serverIds, token };
}

/** POSTs one JSON-RPC message (or batch) to `/mcp/{slug}` over plain HTTP, as a client without the SDK would. */
export function postMcp(platform: TestPlatform, gateway: Pick<FrontedGateway, 'gatewaySlug' | 'token'>, body: unknown, session?: string, protocolVersion?: string): Promise<Response> {
  return fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${gateway.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session } : {}),
      ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
    },
    body: JSON.stringify(body),
  });
}

/**
 * An MCP session opened over plain HTTP (initialize, then notifications/initialized), for tests that must not have
 * an SDK client (which opens a GET stream of its own). Returns the session id.
 */
export async function rawMcpSession(platform: TestPlatform, gateway: Pick<FrontedGateway, 'gatewaySlug' | 'token'>, protocolVersion = '2025-06-18'): Promise<string> {
  const initialized = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  if (initialized.status !== 200) throw new Error(`initialize: ${initialized.status} ${await initialized.text()}`);
  const negotiated = ((await initialized.json()) as { result: { protocolVersion: string } }).result.protocolVersion;
  if (negotiated !== protocolVersion) throw new Error(`initialize negotiated ${negotiated}, not ${protocolVersion}`);
  const session = initialized.headers.get('mcp-session-id')!;
  const acknowledged = await postMcp(platform, gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, session, protocolVersion);
  if (acknowledged.status !== 202) throw new Error(`notifications/initialized: ${acknowledged.status}`);
  return session;
}

/** How a response's body finished: a clean end, or broken off. */
export async function readToEnd(response: Response): Promise<'ended' | 'broken'> {
  const reader = response.body!.getReader();
  try {
    for (;;) if ((await reader.read()).done) return 'ended';
  } catch {
    return 'broken';
  }
}
