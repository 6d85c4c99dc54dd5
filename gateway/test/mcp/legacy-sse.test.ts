import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connectMcpClient,
  expectEventually,
  gatewayAccessToken,
  gatewayUser,
  publishedMcpServer,
  setGatewayServers,
  startLegacySseUpstream,
  startMcpUpstream,
  startTestPlatform,
  unique,
  type GatewayUser,
  type LegacySseUpstream,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';
import { createGuardedDispatcher, parseAllowedNetworks } from '@platform/runtime';
import { LegacySseConnection } from '../../src/mcp/legacy-sse';

/**
 * A gateway in front of an upstream on the legacy HTTP+SSE transport (SDK SSEServerTransport) next to a Streamable
 * HTTP one: the client sees one MCP server and never learns which transport an upstream speaks.
 */
describe('MCP gateway data plane: legacy SSE upstreams', () => {
  let platform: TestPlatform;
  let legacy: LegacySseUpstream;
  let modern: McpUpstream;
  let token: string;
  let owner: GatewayUser['person']['client'];
  let oldId: string;
  const teamSlug = unique('sse-team');
  const gatewaySlug = unique('sse-gw');
  const open: Client[] = [];
  const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
  const connect = async (options: Parameters<typeof connectMcpClient>[3] = {}) => {
    const connected = await connectMcpClient(platform, gatewaySlug, token, options);
    open.push(connected.client);
    return connected;
  };

  beforeAll(async () => {
    [legacy, modern] = await Promise.all([startLegacySseUpstream({ name: 'old' }), startMcpUpstream({ name: 'new' })]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    const user = await gatewayUser(platform, { email: `${unique('sse')}@example.test`, teamSlug, gatewaySlug });
    owner = user.person.client;
    oldId = await publishedMcpServer(owner, teamSlug, { slug: 'old', url: legacy.url, transport: 'sse', authValue: 'Bearer old-static-credential' });
    const newId = await publishedMcpServer(owner, teamSlug, { slug: 'new', url: modern.url });
    await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId: oldId }, { serverId: newId }]);
    token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((client) => client.close()));
    await platform?.stop();
    await Promise.allSettled([legacy?.close(), modern?.close()]);
  });

  it('lists and calls the legacy server\'s tools, prompts and resources beside the modern one\'s', async () => {
    const { client } = await connect();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['old__echo', 'new__echo']));
    expect(textOf(await client.callTool({ name: 'old__echo', arguments: { text: 'hi' } }))).toBe('old: hi');
    expect(textOf(await client.callTool({ name: 'new__echo', arguments: { text: 'hi' } }))).toBe('new: hi');
    // The static credential reaches the legacy server on its message endpoint too.
    expect(textOf(await client.callTool({ name: 'old__whoami', arguments: {} }))).toBe('Bearer old-static-credential');
    const prompt = await client.getPrompt({ name: 'old__greet', arguments: { who: 'Ada' } });
    expect(prompt.messages[0]!.content).toMatchObject({ text: 'old greets Ada' });
    expect((await client.readResource({ uri: 'file:///old/readme.md' })).contents[0]).toMatchObject({ text: '# old readme' });
    const failed = await client.callTool({ name: 'old__fail', arguments: {} });
    expect(failed.isError).toBe(true);
  });

  it('relays progress and elicitation, with concurrent calls each getting their own answer', async () => {
    const { client } = await connect({ capabilities: { elicitation: {} } });
    const progress: number[] = [];
    const slow = client.callTool({ name: 'old__slow', arguments: { steps: 3, stepMs: 30 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    const echoes = await Promise.all(['a', 'b', 'c'].map((text) => client.callTool({ name: 'old__echo', arguments: { text } })));
    expect(echoes.map(textOf)).toEqual(['old: a', 'old: b', 'old: c']);
    expect(textOf(await slow)).toBe('old: done after 3 steps');
    expect(progress).toEqual([1, 2, 3]);

    client.setRequestHandler(ElicitRequestSchema, (request) => ({ action: 'accept', content: { answer: `re: ${request.params.message}` } }));
    expect(textOf(await client.callTool({ name: 'old__ask', arguments: { question: 'Proceed?' } }))).toBe('old: the user said re: Proceed?');
  });

  it('opens a new upstream connection when the old one drops, and closes it when the client ends its session', async () => {
    const { client, transport } = await connect();
    expect(textOf(await client.callTool({ name: 'old__echo', arguments: { text: 'one' } }))).toBe('old: one');
    await legacy.dropStreams();
    await expectEventually(async () => expect(textOf(await client.callTool({ name: 'old__echo', arguments: { text: 'two' } }))).toBe('old: two'));
    const before = legacy.openStreams();
    expect(before).toBeGreaterThan(0);
    await transport.terminateSession();
    await expectEventually(() => expect(legacy.openStreams()).toBe(before - 1));
  });

  it('follows the server to a new address within a session, closing the connection to the old one', async () => {
    const moved = await startLegacySseUpstream({ name: 'moved' });
    const path = `/v1/teams/${teamSlug}/mcp-servers/${oldId}`;
    const moveTo = async (url: string) => {
      const current = await owner.get(path);
      // Another origin (another port): the credential is given again (docs/api.md).
      const changed = await owner.patch(path, { url, authValue: 'Bearer old-static-credential' }, { 'if-match': current.headers.get('etag')! });
      expect(changed.status).toBe(200);
    };
    try {
      const { client } = await connect();
      expect(textOf(await client.callTool({ name: 'old__echo', arguments: { text: 'here' } }))).toBe('old: here');
      const before = legacy.openStreams();
      await moveTo(moved.url);
      // The same session's next call reaches the server where it is now; its stream to the old address is closed.
      await expectEventually(async () => expect(textOf(await client.callTool({ name: 'old__echo', arguments: { text: 'there' } }))).toBe('moved: there'));
      expect(textOf(await client.callTool({ name: 'old__whoami', arguments: {} }))).toBe('Bearer old-static-credential');
      await expectEventually(() => expect(legacy.openStreams()).toBe(before - 1));
    } finally {
      await moveTo(legacy.url);
      await moved.close();
    }
  });
});

/** The connection itself, against raw SSE servers that misbehave the ways the transport allows. */
describe('legacy SSE connection', () => {
  const servers: Server[] = [];
  const client = { protocolVersion: '2024-11-05', clientName: 'test', clientVersion: '1', clientCapabilities: {} };
  const options = { dispatcher: createGuardedDispatcher({ allowedNetworks: parseAllowedNetworks('127.0.0.0/8') }), maxMessageBytes: 1024, timeoutSeconds: 2 };
  const server = (id: string) => ({ id, slug: id, name: id, teamId: '', prefix: '', transport: 'sse', timeoutSeconds: 2, headers: {}, sendIdentity: false, capturePayloads: false, capabilities: [] });

  /** An SSE endpoint that writes `events` (raw SSE text) and keeps the stream open; POSTs are counted. */
  async function rawSse(events: string): Promise<{ url: string; posts: () => number }> {
    let posts = 0;
    const http = createServer((request, response) => {
      if (request.method === 'POST') {
        posts++;
        response.writeHead(202).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(events);
    });
    servers.push(http);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/sse`, posts: () => posts };
  }

  afterAll(async () => {
    for (const http of servers) http.closeAllConnections();
    await Promise.all(servers.map((http) => new Promise((resolve) => http.close(resolve))));
    await options.dispatcher.close();
  });

  it('refuses a message endpoint on another origin, so the credential is never posted there', async () => {
    // Another port of 127.0.0.1: another origin, inside the allowed network, so a POST there would arrive and be counted.
    const elsewhere = await rawSse('');
    const upstream = await rawSse(`event: endpoint\ndata: ${elsewhere.url.replace(/\/sse$/, '/messages')}\n\n`);
    await expect(LegacySseConnection.open({ ...server('elsewhere'), url: upstream.url }, { authorization: 'Bearer secret' }, client, options)).rejects.toMatchObject({
      errorClass: 'protocol_error',
      message: expect.stringMatching(/another origin/),
    });
    expect([elsewhere.posts(), upstream.posts()]).toEqual([0, 0]);
  });

  it('gives up when no endpoint is named within the server\'s timeout, and on a message over the size limit', async () => {
    const silent = await rawSse(': nothing to say\n\n');
    await expect(LegacySseConnection.open({ ...server('silent'), url: silent.url }, {}, client, options)).rejects.toMatchObject({ errorClass: 'protocol_error' });
    const flood = await rawSse(`event: message\ndata: ${'x'.repeat(4096)}\n\n`);
    await expect(LegacySseConnection.open({ ...server('flood'), url: flood.url }, {}, client, options)).rejects.toMatchObject({ errorClass: 'protocol_error' });
  });
});
