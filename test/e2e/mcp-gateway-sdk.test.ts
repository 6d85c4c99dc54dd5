import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  authorizeAsPerson,
  expectEventually,
  freePort,
  gatewayUser,
  MemoryOAuthProvider,
  publishedMcpServer,
  setGatewayServers,
  startMcpUpstream,
  startTestPlatform,
  type GatewayUser,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * The end-to-end case, with the official MCP TypeScript SDK on both sides: a `Client` whose
 * `StreamableHTTPClientTransport` has an `OAuthClientProvider` is given only the gateway's URL; it discovers the
 * authorization server, registers, authorizes with PKCE (the person signs in and consents), then uses one gateway
 * fronting two upstream `McpServer`s: tools, a resource, a prompt, progress, an elicitation relayed from upstream,
 * and a changed upstream tool that disappears until it is approved.
 */
let platform: TestPlatform;
let user: GatewayUser;
let alpha: McpUpstream;
let beta: McpUpstream;
let gatewayUrl: string;
let alphaId: string;

const REDIRECT_URI = 'http://127.0.0.1:43120/oauth/callback';
const TEAM = 'e2e-gw-team';

beforeAll(async () => {
  [alpha, beta] = await Promise.all([startMcpUpstream({ name: 'alpha' }), startMcpUpstream({ name: 'beta' })]);
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  platform = await startTestPlatform({ env: { PORT: String(port), APP_URL: appUrl, ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
  user = await gatewayUser(platform, { email: 'gateway-e2e@example.test', teamSlug: TEAM, gatewaySlug: 'e2e-gw', gatewayName: 'E2E Gateway' });
  const owner = user.person.client;
  alphaId = await publishedMcpServer(owner, TEAM, { slug: 'alpha', url: alpha.url });
  const betaId = await publishedMcpServer(owner, TEAM, { slug: 'beta', url: beta.url });
  await setGatewayServers(owner, TEAM, user.gatewaySlug, [{ serverId: alphaId }, { serverId: betaId }]);
  gatewayUrl = `${appUrl}/mcp/${user.gatewaySlug}`;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await Promise.allSettled([alpha?.close(), beta?.close()]);
});

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

test('an SDK client authorizes through the gateway and uses both upstreams through it', async () => {
  const provider = new MemoryOAuthProvider(REDIRECT_URI, 'Gateway e2e client');
  const first = new StreamableHTTPClientTransport(new URL(gatewayUrl), { authProvider: provider });
  await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toThrow(/unauthorized/i);
  expect(provider.client?.client_id).toMatch(/^svccl_/);
  const { redirect, consentPage } = await authorizeAsPerson(platform, user.person.client.cookieHeader(), provider.authorizationUrl!);
  expect(consentPage).toContain('E2E Gateway');
  await first.finishAuth(redirect.searchParams.get('code')!);
  expect(provider.stored?.access_token).toMatch(/^svcat_/);

  const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  await client.connect(new StreamableHTTPClientTransport(new URL(gatewayUrl), { authProvider: provider }));
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['alpha__echo', 'beta__echo', 'alpha__slow', 'beta__ask']));
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'one' } }))).toBe('alpha: one');
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'two' } }))).toBe('beta: two');
    expect((await client.readResource({ uri: 'file:///beta/readme.md' })).contents[0]).toMatchObject({ text: '# beta readme' });
    expect((await client.getPrompt({ name: 'alpha__greet', arguments: { who: 'Grace' } })).messages[0]!.content).toMatchObject({ text: 'alpha greets Grace' });

    const progress: number[] = [];
    await client.callTool({ name: 'beta__slow', arguments: { steps: 2, stepMs: 5 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2]);

    client.setRequestHandler(ElicitRequestSchema, (request) => ({ action: 'accept', content: { answer: `yes to ${request.params.message}` } }));
    expect(textOf(await client.callTool({ name: 'beta__ask', arguments: { question: 'deploy' } }))).toBe('beta: the user said yes to deploy');

    // The upstream changes a tool's definition and announces it; the gateway re-discovers and hides the tool.
    // The upstream announces only its tools; the gateway's own notice says that every list may have changed. A
    // prompts/list_changed can therefore only be the gateway's, telling the client what the catalog changed.
    let gatewayNotices = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      gatewayNotices++;
    });
    const noticesBeforeHide = gatewayNotices;
    alpha.redefineEcho('Echoes text, then sends it elsewhere');
    await expectEventually(async () => expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('alpha__echo'), 30_000);
    await expect(client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602 });
    // The hide's own notice first: arriving late, it would otherwise count as the approval's below.
    await expectEventually(() => expect(gatewayNotices).toBeGreaterThan(noticesBeforeHide));
    const heardBefore = gatewayNotices;

    // A team owner approves the change (self_publish); the tool comes back with its new definition.
    const owner = user.person.client;
    const capabilities = (await owner.get(`/v1/teams/${TEAM}/mcp-servers/${alphaId}/capabilities`)).body.data as { id: string; kind: string; name: string }[];
    const echo = capabilities.find((capability) => capability.kind === 'tool' && capability.name === 'echo')!;
    expect((await owner.put(`/v1/teams/${TEAM}/mcp-servers/${alphaId}/capabilities/${echo.id}/approval`)).status).toBe(200);
    await expectEventually(async () => {
      const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'alpha__echo');
      expect(tool?.description).toBe('Echoes text, then sends it elsewhere');
    });
    // The approval changed the catalog alone (the upstream said nothing): the gateway told the client's GET stream itself.
    await expectEventually(() => expect(gatewayNotices).toBeGreaterThan(heardBefore));
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'back' } }))).toBe('alpha: back');
  } finally {
    await client.close();
  }
}, 90_000);
