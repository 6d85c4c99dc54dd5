import {
  connectMcpClient,
  describeWith,
  expectEventually,
  gatewayAccessToken,
  gatewayUser,
  publishedMcpServer,
  setGatewayServers,
  startEdgeReplica,
  startMcpUpstream,
  startTestPlatform,
  unique,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * Sessions are not pinned to a replica: a session opened on one edge keeps working when its requests land on
 * another, including the answer to a question relayed from upstream, a cancellation, and ending the session. The
 * second replica is a process of its own, so nothing reaches it but what another pod would see (Redis, Kafka, gRPC).
 */
describeWith('postgres', 'MCP gateway sessions across edge replicas', () => {
  let platform: TestPlatform;
  let replica: Awaited<ReturnType<typeof startEdgeReplica>>;
  let upstream: McpUpstream;
  let token: string;
  const teamSlug = unique('rep-team');
  const gatewaySlug = unique('rep-gw');

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    replica = await startEdgeReplica(platform);
    const user = await gatewayUser(platform, { email: `${unique('rep')}@example.test`, teamSlug, gatewaySlug });
    const serverId = await publishedMcpServer(user.person.client, teamSlug, { slug: 'alpha', url: upstream.url });
    await setGatewayServers(user.person.client, teamSlug, gatewaySlug, [{ serverId }]);
    token = await gatewayAccessToken(platform, user.person.client.cookieHeader(), gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    await replica?.stop();
    await platform?.stop();
    await upstream?.close();
  });

  /** One JSON-RPC POST to `base` in the session; the response's messages (JSON or SSE). */
  async function post(base: (path: string) => string, sessionId: string, message: unknown): Promise<{ status: number; messages: Record<string, unknown>[] }> {
    const response = await fetch(base(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(message),
    });
    const text = await response.text();
    if (!text) return { status: response.status, messages: [] };
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const messages = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
      return { status: response.status, messages };
    }
    return { status: response.status, messages: [JSON.parse(text) as Record<string, unknown>] };
  }

  it('serves a session opened on one replica from the other, relays answers across them, and ends it everywhere', async () => {
    const { client, transport } = await connectMcpClient(platform, gatewaySlug, token, { capabilities: { elicitation: {} } });
    const sessionId = transport.sessionId!;

    const listed = await post(replica.url, sessionId, { jsonrpc: '2.0', id: 11, method: 'tools/list' });
    expect(listed.status).toBe(200);
    expect((listed.messages[0]!.result as { tools: { name: string }[] }).tools.map((tool) => tool.name)).toContain('alpha__echo');
    const called = await post(replica.url, sessionId, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'alpha__echo', arguments: { text: 'via B' } } });
    expect(called.messages.at(-1)).toMatchObject({ id: 12, result: { content: [{ text: 'alpha: via B' }] } });

    // A relayed question arrives on replica A's stream; its answer is posted to replica B.
    const asking = fetch(platform.url(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'alpha__ask', arguments: { question: 'Across?' } } }),
    });
    const response = await asking;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    const nextMessage = async (): Promise<Record<string, unknown>> => {
      for (;;) {
        const line = buffered.split('\n').find((candidate) => candidate.startsWith('data: '));
        if (line) {
          buffered = buffered.slice(buffered.indexOf(line) + line.length);
          return JSON.parse(line.slice(6)) as Record<string, unknown>;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended: ${buffered}`);
        buffered += decoder.decode(value, { stream: true });
      }
    };
    const question = await nextMessage();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: 'Across?' } });
    const answered = await post(replica.url, sessionId, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { answer: 'from B' } } });
    expect(answered.status).toBe(202);
    expect(await nextMessage()).toMatchObject({ id: 13, result: { content: [{ text: 'alpha: the user said from B' }] } });

    // A slow call on A, cancelled through B: A's exchange ends without an answer.
    const slow = fetch(platform.url(`/mcp/${gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 14, method: 'tools/call', params: { name: 'alpha__slow', arguments: { steps: 20, stepMs: 1_000 }, _meta: { progressToken: 'p14' } } }),
    });
    const slowResponse = await slow;
    const slowReader = slowResponse.body!.getReader();
    const firstProgress = await slowReader.read();
    expect(new TextDecoder().decode(firstProgress.value)).toContain('notifications/progress');
    expect((await post(replica.url, sessionId, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 14, reason: 'changed my mind' } })).status).toBe(202);
    let rest = '';
    for (;;) {
      const { value, done } = await slowReader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).not.toContain('"id":14');
    // The upstream heard the cancellation and stopped the tool (it checks between its 20 one-second steps).
    await expectEventually(() => expect(upstream.cancelledCalls).toBe(1));

    // Ended on B, refused on A.
    const ended = await fetch(replica.url(`/mcp/${gatewaySlug}`), { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId } });
    expect(ended.status).toBe(200);
    await expectEventually(async () => expect((await post(platform.url, sessionId, { jsonrpc: '2.0', id: 15, method: 'ping' })).status).toBe(404));
    await client.close().catch(() => undefined);
  }, 60_000);
});
