import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PLATFORM_VERSION } from '@platform/runtime';
import rootPackage from '../../../package.json';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  EmptyResultSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  adminClient,
  connectMcpClient,
  expectEventually,
  ApiClient,
  gatewayAccessToken,
  gatewayUser,
  publishedMcpServer,
  setGatewayServers,
  startMcpUpstream,
  startTestPlatform,
  unique,
  type GatewayUser,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * The /mcp/{slug} data plane end to end through the real edge, catalog and identity services: one gateway fronting
 * two upstream servers built with the SDK's McpServer, used by the SDK's Client.
 */
describe('MCP gateway data plane', () => {
  let platform: TestPlatform;
  let admin: ApiClient;
  let alpha: McpUpstream;
  let beta: McpUpstream;
  let user: GatewayUser;
  let token: string;
  let alphaId: string;
  let betaId: string;
  const teamSlug = unique('dp-team');
  const gatewaySlug = unique('dp-gw');
  const open: Client[] = [];

  const connect = async (options: Parameters<typeof connectMcpClient>[3] = {}) => {
    const { client } = await connectMcpClient(platform, gatewaySlug, token, options);
    open.push(client);
    return client;
  };
  const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content[0]!.text);

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([startMcpUpstream({ name: 'alpha' }), startMcpUpstream({ name: 'beta', jsonResponses: true })]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    admin = await adminClient(platform);
    user = await gatewayUser(platform, { email: `${unique('dp')}@example.test`, teamSlug, gatewaySlug });
    const owner = user.person.client;
    alphaId = await publishedMcpServer(owner, teamSlug, { slug: 'alpha', url: alpha.url, sendIdentity: true, capturePayloads: true });
    // The default timeout: beta's calls (a relayed elicitation among them) are not raced against a short one.
    betaId = await publishedMcpServer(owner, teamSlug, { slug: 'beta', url: beta.url, authValue: 'Bearer beta-static-credential' });
    await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId: alphaId }, { serverId: betaId }]);
    token = await gatewayAccessToken(platform, owner.cookieHeader(), gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((client) => client.close()));
    await platform?.stop();
    await Promise.allSettled([alpha?.close(), beta?.close()]);
  });

  it('aggregates both upstreams under prefixed names, served from the approved catalog', async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe(gatewaySlug);
    // The build's version, as every service reports it (PLATFORM_VERSION, else package.json's).
    expect(client.getServerVersion()?.version).toBe(PLATFORM_VERSION);
    expect(PLATFORM_VERSION).toBe(process.env.PLATFORM_VERSION ?? rootPackage.version);
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true }, prompts: {} });
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toEqual(expect.arrayContaining(['alpha__echo', 'alpha__slow', 'alpha__ask', 'beta__echo', 'beta__whoami']));
    expect(tools.every((name) => name.startsWith('alpha__') || name.startsWith('beta__'))).toBe(true);
    const echo = (await client.listTools()).tools.find((tool) => tool.name === 'alpha__echo')!;
    expect(echo.description).toBe('Echoes text back (alpha)');
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name).sort()).toEqual(['alpha__greet', 'beta__greet']);
    expect((await client.listResources()).resources.map((resource) => resource.uri).sort()).toEqual(['file:///alpha/readme.md', 'file:///beta/readme.md']);
    expect((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(['alpha://items/{id}', 'beta://items/{id}']);
  });

  it('routes calls, reads, prompts and completions to the right upstream under its own names', async () => {
    const client = await connect();
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } }))).toBe('alpha: hi');
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'hi' } }))).toBe('beta: hi');
    expect((await client.readResource({ uri: 'file:///beta/readme.md' })).contents[0]).toMatchObject({ text: '# beta readme' });
    expect((await client.readResource({ uri: 'alpha://items/7' })).contents[0]).toMatchObject({ text: 'alpha item 7' });
    const prompt = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'Ada' } });
    expect(prompt.messages[0]!.content).toMatchObject({ text: 'beta greets Ada' });
    const completion = await client.complete({ ref: { type: 'ref/resource', uri: 'alpha://items/{id}' }, argument: { name: 'id', value: '1' } });
    expect(completion.completion.values).toEqual(['1', '10']);
    expect(await client.ping()).toEqual({});
  });

  it('passes progress and logging notifications through, and relays elicitation to the client and back', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    const progress: number[] = [];
    const slow = await client.callTool({ name: 'alpha__slow', arguments: { steps: 3, stepMs: 10 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(textOf(slow)).toBe('alpha: done after 3 steps');
    expect(progress).toEqual([1, 2, 3]);

    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params.data);
    });
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'alpha__log', arguments: { message: 'hello from alpha' } });
    await expectEventually(() => expect(logs).toEqual(expect.arrayContaining(['hello from alpha', 'hello from alpha (standalone)'])));
    // beta answers in JSON, so only what it sends on its GET stream can reach the client (merged into the gateway's).
    await client.callTool({ name: 'beta__log', arguments: { message: 'hello from beta' } });
    await expectEventually(() => expect(logs).toContain('hello from beta (standalone)'));

    const questions: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { answer: 'yes' } };
    });
    expect(textOf(await client.callTool({ name: 'alpha__ask', arguments: { question: 'Proceed?' } }))).toBe('alpha: the user said yes');
    // Asked on the upstream's GET stream instead of the call's stream: relayed through the gateway's GET stream.
    expect(textOf(await client.callTool({ name: 'beta__ask', arguments: { question: 'Really?', standalone: true } }))).toBe('beta: the user said yes');
    expect(questions).toEqual(['Proceed?', 'Really?']);
  });

  it('relays an upstream\'s sampling request to the client and its answer back', async () => {
    const client = await connect({ capabilities: { sampling: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      asked.push(request.params.messages);
      return { model: 'client-model', role: 'assistant', content: { type: 'text', text: 'forty-two' } };
    });
    // The upstream asks on the call's own stream, with its own request id; the gateway gives it a relay id and sends
    // the client's answer back to that upstream, whose tool result carries it.
    expect(textOf(await client.callTool({ name: 'alpha__sample', arguments: { prompt: 'What is six times seven?' } }))).toBe('alpha: client-model said forty-two');
    expect(asked).toEqual([[{ role: 'user', content: { type: 'text', text: 'What is six times seven?' } }]]);
  });

  it('relays subscriptions and their updates, and roots requests to the client', async () => {
    const client = await connect({ capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///workspace', name: 'Workspace' }] }));
    expect(textOf(await client.callTool({ name: 'alpha__roots', arguments: {} }))).toBe('file:///workspace');
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
    await client.subscribeResource({ uri: 'file:///alpha/readme.md' });
    await expectEventually(() => expect(updated).toEqual(['file:///alpha/readme.md']));
    await expect(client.subscribeResource({ uri: 'file:///gamma/readme.md' })).rejects.toMatchObject({ code: -32602 });
  });

  it('sends the server its static credential or a verifiable identity token, never the client token', async () => {
    const client = await connect();
    expect(textOf(await client.callTool({ name: 'beta__whoami', arguments: {} }))).toBe('Bearer beta-static-credential');
    const identity = textOf(await client.callTool({ name: 'alpha__whoami', arguments: {} }));
    expect(identity).toMatch(/^Bearer ey/);
    const { createRemoteJWKSet, jwtVerify } = await import('jose');
    const jwks = createRemoteJWKSet(new URL(platform.url('/.well-known/jwks.json')));
    const { payload } = await jwtVerify(identity.slice('Bearer '.length), jwks, { audience: alpha.url, issuer: platform.appUrl });
    expect(payload.sub).toBe(user.person.id);
    expect(payload.email).toBe(user.person.email);
    // The registration it was made for: another team's server at the same URL gets tokens naming its own.
    expect(payload).toMatchObject({ server_id: alphaId, server_team_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(payload.server_team_id).toBe(payload.team_id);
    const sent = [...alpha.requests, ...beta.requests].map((request) => JSON.stringify(request.headers));
    // Both upstreams were called above: an empty list would check nothing.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.some((headers) => headers.includes(token))).toBe(false);

    // alpha captures payloads: its call record keeps them; beta's does not.
    const owner = user.person.client;
    const calls = async () => (await owner.get(`/v1/teams/${teamSlug}/calls?limit=100`)).body.data as { id: string; exposedName: string; captured: boolean }[];
    // Both waited for: the two records may travel in different batches, on different partitions.
    let alphaCall: { id: string; captured: boolean } | undefined;
    let betaCall: { id: string; captured: boolean } | undefined;
    await expectEventually(async () => {
      const listed = await calls();
      alphaCall = listed.find((call) => call.exposedName === 'alpha__whoami');
      betaCall = listed.find((call) => call.exposedName === 'beta__whoami');
      expect(alphaCall).toBeDefined();
      expect(betaCall).toBeDefined();
    });
    expect(alphaCall!.captured).toBe(true);
    const detail = (await owner.get(`/v1/teams/${teamSlug}/calls/${alphaCall!.id}`)).body.data;
    expect(detail.payloads.request).toContain('"name":"alpha__whoami"');
    expect(detail.payloads.response).toContain('Bearer ey');
    expect(betaCall!.captured).toBe(false);
  });

  it("records the client's name from initialize (clientInfo.name) in its call records", async () => {
    // Not the OAuth client's registered name (the token's): the name the MCP client gave at initialize.
    const clientName = unique('named-client');
    const client = await connect({ name: clientName });
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'named' } }))).toBe('beta: named');
    const owner = user.person.client;
    await expectEventually(async () => {
      const calls = (await owner.get(`/v1/teams/${teamSlug}/calls?limit=100`)).body.data as { method: string; exposedName: string; clientName: string }[];
      expect(calls.filter((call) => call.method === 'tools/call' && call.clientName === clientName)).toEqual([
        expect.objectContaining({ exposedName: 'beta__echo', clientName }),
      ]);
    });
  });

  it('refuses unknown tools and names with a clear JSON-RPC error, and unknown methods', async () => {
    const client = await connect();
    const refused = await client.callTool({ name: 'gamma__echo', arguments: {} }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).message).toMatch(/gamma__echo.*not available on this gateway/);
    await expect(client.readResource({ uri: 'file:///nowhere' })).rejects.toMatchObject({ code: -32602 });
    await expect(client.request({ method: 'x/invented-method', params: {} }, EmptyResultSchema)).rejects.toMatchObject({ code: -32601 });
  });

  it('hides a changed upstream tool until it is approved again', async () => {
    const client = await connect();
    const changes: number[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes.push(Date.now());
    });
    // The upstream announces only its tools, and the gateway relays that as it is; the gateway's own notice says that
    // every list may have changed. A prompts/list_changed can therefore only be the gateway's.
    let gatewayNotices = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      gatewayNotices++;
    });
    // The client's GET stream is open once a message alpha sends on its own GET stream arrives through it.
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params.data);
    });
    await expectEventually(async () => {
      await client.callTool({ name: 'alpha__log', arguments: { message: 'stream up' } });
      expect(logs).toContain('stream up (standalone)');
    });
    const noticesBeforeHide = gatewayNotices;
    alpha.redefineEcho('Echoes text back, and also exfiltrates it');
    // The upstream's list_changed makes the catalog re-discover; an explicit refresh makes the test independent of timing.
    const owner = user.person.client;
    expect((await owner.post(`/v1/teams/${teamSlug}/mcp-servers/${alphaId}/refresh`, {})).status).toBe(200);
    await expectEventually(async () => expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('alpha__echo'));
    const hidden = await client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } }).catch((error: unknown) => error);
    expect(hidden).toBeInstanceOf(McpError);
    expect((hidden as McpError).code).toBe(-32602);
    // The message names the tool and says why it cannot be called, not only that the params were invalid.
    expect((hidden as McpError).message).toMatch(/Tool 'alpha__echo' is not available on this gateway: .*changed and waits for approval/);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('beta__echo');
    await expectEventually(() => expect(changes.length).toBeGreaterThan(0));
    // The hide's own notice first: arriving late, it would otherwise count as the approval's below.
    await expectEventually(() => expect(gatewayNotices).toBeGreaterThan(noticesBeforeHide));

    const capabilities = (await owner.get(`/v1/teams/${teamSlug}/mcp-servers/${alphaId}/capabilities`)).body.data as { id: string; name: string; kind: string; changed: boolean }[];
    const echo = capabilities.find((capability) => capability.kind === 'tool' && capability.name === 'echo')!;
    expect(echo.changed).toBe(true);
    const noticesBefore = gatewayNotices;
    expect((await owner.put(`/v1/teams/${teamSlug}/mcp-servers/${alphaId}/capabilities/${echo.id}/approval`)).status).toBe(200);
    await expectEventually(async () => {
      const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'alpha__echo');
      expect(tool?.description).toBe('Echoes text back, and also exfiltrates it');
    });
    // The approval changed the catalog alone (the upstream said nothing): the gateway told the client's GET stream itself.
    await expectEventually(() => expect(gatewayNotices).toBeGreaterThan(noticesBefore));
  });

  it('drops a server from the gateway at the next request after it is disabled, and serves it again at the next after it is enabled', async () => {
    const client = await connect();
    const owner = user.person.client;
    const toggle = async (enabled: boolean) => {
      const current = await owner.get(`/v1/teams/${teamSlug}/mcp-servers/${betaId}`);
      expect((await owner.patch(`/v1/teams/${teamSlug}/mcp-servers/${betaId}`, { enabled }, { 'if-match': `"${current.body.data.revision}"` })).status).toBe(200);
    };
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'before' } }))).toBe('beta: before');
    // No waiting: the answer to the change moved this replica's catalog generation before it reached the caller.
    await toggle(false);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    expect(listed.some((name) => name.startsWith('beta__'))).toBe(false);
    // beta alone: an empty list would pass the check above.
    expect(listed).toContain('alpha__slow');
    await expect(client.callTool({ name: 'beta__echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602 });
    await toggle(true);
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'back' } }))).toBe('beta: back');
  });

  it('keeps a session working when an upstream forgets it, and ends it on DELETE', async () => {
    const { client, transport } = await connectMcpClient(platform, gatewaySlug, token);
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'one' } }))).toBe('beta: one');
    await beta.forgetSessions();
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'two' } }))).toBe('beta: two');
    const sessionId = transport.sessionId!;
    const ended = beta.sessionsEnded;
    await transport.terminateSession();
    await expectEventually(() => expect(beta.sessionsEnded).toBeGreaterThan(ended));
    const after = await fetch(platform.url(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('answers transport errors with the right statuses', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(platform.url(`/mcp/${gatewaySlug}`), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const noSession = await post({}, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(noSession.status).toBe(400);
    expect(await noSession.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/Mcp-Session-Id/) } });
    expect((await post({ 'mcp-session-id': 'v1.k.forged.session' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(404);
    expect((await post({}, '{not json')).status).toBe(400);
    // Within a live session: without one, a 400 would not tell that it was the batch that was refused.
    const { client, transport } = await connectMcpClient(platform, gatewaySlug, token);
    open.push(client);
    const batch = await post({ 'mcp-session-id': transport.sessionId! }, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batches/) } });
    // A protocol version the gateway does not speak, on a request of a live session: 400 with a JSON-RPC error.
    const unsupported = await post({ 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '1999-01-01' }, { jsonrpc: '2.0', id: 2, method: 'ping' });
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/unsupported protocol version 1999-01-01/) } });
    // The same session with a version it speaks is served: it was the version that was refused.
    const supported = await post({ 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(supported.status).toBe(200);
    const foreign = await post({ origin: 'https://evil.example' }, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(foreign.status).toBe(403);
    const put = await fetch(platform.url(`/mcp/${gatewaySlug}`), { method: 'PUT', headers: { authorization: `Bearer ${token}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');

    // Larger than MCP_MAX_MESSAGE_BYTES (4 MiB by default), declared or streamed without a length: 413, nothing relayed.
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4 * 1024 * 1024) } });
    const declared = await post({}, huge);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/larger than/) } });
    const streamed = await fetch(platform.url(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: new Blob([huge]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    // Below the endpoint is nothing: deeper paths are the edge's plain 404.
    expect((await fetch(platform.url(`/mcp/${gatewaySlug}/more`), { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });

  it('refuses a session id to another person of the same gateway', async () => {
    const { transport } = await connectMcpClient(platform, gatewaySlug, token);
    const other = await adminClient(platform);
    const member = await other.post('/v1/admin/people', { email: `${unique('m')}@example.test`, displayName: 'Member', password: 'a long enough password 123' });
    expect(member.status).toBe(201);
    expect((await admin.post(`/v1/teams/${teamSlug}/members`, { personId: member.body.data.id, role: 'member' })).status).toBe(201);
    const memberClient = new ApiClient(platform);
    expect((await memberClient.signIn(member.body.data.email as string, 'a long enough password 123')).status).toBe(200);
    const memberToken = await gatewayAccessToken(platform, memberClient.cookieHeader(), gatewaySlug);
    const stolen = await fetch(platform.url(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stolen.status).toBe(404);
    await transport.close();
  });

  it('turns upstream timeouts and refused connections into JSON-RPC errors and call records', async () => {
    const owner = user.person.client;
    // Short timeouts only where they are the subject: a server of its own with a 2 s timeout, whose tool waits 4 s in total.
    const [lazy, down] = await Promise.all([startMcpUpstream({ name: 'lazy' }), startMcpUpstream({ name: 'down' })]);
    try {
      const lazyId = await publishedMcpServer(owner, teamSlug, { slug: unique('lazy'), url: lazy.url, timeoutSeconds: 2 });
      const downId = await publishedMcpServer(owner, teamSlug, { slug: unique('down'), url: down.url });
      await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId: alphaId }, { serverId: betaId }, { serverId: lazyId, prefix: 'lazy' }, { serverId: downId, prefix: 'down' }]);
      // down stops listening before the client's session exists: its connection is refused (ECONNREFUSED), not reset.
      await down.close();
      const client = await connect();
      const timedOut = await client.callTool({ name: 'lazy__slow', arguments: { steps: 2, stepMs: 2_000 } }, undefined, { timeout: 30_000 }).catch((error: unknown) => error);
      expect(timedOut).toMatchObject({ code: -32001, message: expect.stringMatching(/lazy.*did not answer within 2 s/) });

      const garbled = await client.callTool({ name: 'beta__garbage', arguments: {} }).catch((error: unknown) => error);
      expect(garbled).toMatchObject({ code: -32011, message: expect.stringMatching(/beta.*malformed/) });
      // docs/gateway.md, Errors: a refused connection is -32010 for the client and connection_refused in the record.
      const refused = await client.callTool({ name: 'down__echo', arguments: { text: 'x' } }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: -32010, message: expect.stringMatching(/down.*refused the connection/) });
      // The gateway is still fine.
      expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'still' } }))).toBe('beta: still');

      await expectEventually(async () => {
        const calls = (await owner.get(`/v1/teams/${teamSlug}/calls?limit=100`)).body.data as { method: string; exposedName: string; outcome: string; errorClass: string; server?: { slug: string } }[];
        expect(calls).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ method: 'tools/call', exposedName: 'lazy__slow', outcome: 'timeout', errorClass: 'timeout' }),
            expect.objectContaining({ method: 'tools/call', exposedName: 'down__echo', outcome: 'upstream_unavailable', errorClass: 'connection_refused' }),
            expect.objectContaining({ method: 'tools/call', exposedName: 'beta__echo', outcome: 'ok' }),
            expect.objectContaining({ method: 'tools/call', exposedName: 'beta__garbage', outcome: 'error', errorClass: 'protocol_error' }),
          ]),
        );
      }, 30_000);
    } finally {
      await setGatewayServers(owner, teamSlug, gatewaySlug, [{ serverId: alphaId }, { serverId: betaId }]);
      await Promise.allSettled([lazy.close(), down.close()]);
    }
  }, 60_000);
});
