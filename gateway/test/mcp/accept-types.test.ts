import { expectEventually, gatewayFronting, startMcpUpstream, startTestPlatform, type FrontedGateway, type McpUpstream, type TestPlatform } from '@platform/test';

type Message = { id?: unknown; method?: string; result?: { isError?: boolean; content?: { text: string }[] } & Record<string, unknown>; error?: { code: number; message: string } };

/**
 * `/mcp/{slug}` for clients that accept only one of the answer types MCP has them accept both of (docs/gateway.md,
 * "A request's path"): a client taking only JSON gets the answer alone, never a stream (notifications dropped, an
 * upstream's question refused so the upstream goes on); a client taking only SSE gets every answer with a body as a
 * stream, the gateway's own answers and errors included. Raw HTTP, so that the Accept header is the test's choice.
 */
describe('MCP gateway data plane: answers in the type the client accepts', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'acc' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'accept', [{ slug: 'acc', url: upstream.url }]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const JSON_ONLY = 'application/json';
  const SSE_ONLY = 'text/event-stream';
  const BOTH = 'application/json, text/event-stream';

  /** One POST with this Accept; bounded, so that a call the gateway leaves hanging fails the test instead of stalling it. */
  const send = (accept: string, body: unknown, session?: string, protocolVersion = '2025-06-18') =>
    fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.token}`,
        'content-type': 'application/json',
        accept,
        'mcp-protocol-version': protocolVersion,
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });

  /** A session opened by a client sending this Accept throughout, which can answer elicitation and sampling. */
  const sessionAccepting = async (accept: string, protocolVersion = '2025-06-18') => {
    const params = { protocolVersion, capabilities: { elicitation: {}, sampling: {} }, clientInfo: { name: 'one-type', version: '1' } };
    const opened = await send(accept, { jsonrpc: '2.0', id: 0, method: 'initialize', params }, undefined, protocolVersion);
    expect(opened.status).toBe(200);
    await opened.text();
    const session = opened.headers.get('mcp-session-id')!;
    expect((await send(accept, { jsonrpc: '2.0', method: 'notifications/initialized' }, session, protocolVersion)).status).toBe(202);
    return session;
  };

  const call = (id: number, tool: string, args: Record<string, unknown>, progressToken?: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: `acc__${tool}`, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) },
  });

  /** The content type and the JSON-RPC messages of an answer, read whole. */
  const answerOf = async (response: Response) => {
    const type = response.headers.get('content-type') ?? '';
    const body = await response.text();
    const messages = type.startsWith('text/event-stream')
      ? body
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => JSON.parse(line.slice('data: '.length)) as Message)
      : [JSON.parse(body) as Message | Message[]].flat();
    return { status: response.status, type: type.split(';')[0], messages };
  };

  it('answers a client that accepts only JSON with the result alone, dropping the progress a client taking both sees streamed', async () => {
    const session = await sessionAccepting(JSON_ONLY);
    const answered = await answerOf(await send(JSON_ONLY, call(1, 'slow', { steps: 3, stepMs: 20 }, 'p1'), session));
    expect(answered).toEqual({
      status: 200,
      type: 'application/json',
      messages: [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'acc: done after 3 steps' }] } }],
    });

    // Unchanged for a client that takes both: what comes before the answer makes the answer a stream.
    const both = await answerOf(await send(BOTH, call(2, 'slow', { steps: 3, stepMs: 20 }, 'p2'), await sessionAccepting(BOTH)));
    expect(both.type).toBe('text/event-stream');
    expect(both.messages.map((message) => message.method ?? message.id)).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress', 2]);
  }, 60_000);

  it('refuses an upstream\'s question to a client that accepts only JSON, at once, so the upstream finishes the call', async () => {
    const session = await sessionAccepting(JSON_ONLY);
    const answered = await answerOf(await send(JSON_ONLY, call(3, 'ask', { question: 'Which colour?' }), session));
    expect(answered.status).toBe(200);
    expect(answered.type).toBe('application/json');
    // The upstream's elicitation failed with the error an SDK client gives a method it cannot handle; its tool said so.
    expect(answered.messages).toEqual([{ jsonrpc: '2.0', id: 3, result: { isError: true, content: [{ type: 'text', text: expect.stringMatching(/-32601.*accepts only application\/json/) }] } }]);
  }, 60_000);

  it('answers a cancelled request of a client that accepts only JSON with 202 and no body, not an empty stream', async () => {
    const session = await sessionAccepting(JSON_ONLY);
    const long = send(JSON_ONLY, call(4, 'slow', { steps: 1, stepMs: 20_000 }), session);
    let settled = false;
    void long.finally(() => (settled = true)).catch(() => undefined);
    // Cancelled until the exchange has it: a cancellation that comes before the request is in flight changes nothing.
    await expectEventually(async () => {
      const cancelled = await send(JSON_ONLY, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4, reason: 'changed my mind' } }, session);
      expect(cancelled.status).toBe(202);
      expect(settled).toBe(true);
    }, 15_000);
    const response = await long;
    expect([response.status, response.headers.get('content-type'), await response.text()]).toEqual([202, null, '']);
  }, 60_000);

  it('answers a batch of a client that accepts only JSON with one JSON array of the answers', async () => {
    const session = await sessionAccepting(JSON_ONLY, '2025-03-26');
    const batch = [call(1, 'slow', { steps: 2, stepMs: 20 }, 'b1'), { jsonrpc: '2.0', id: 2, method: 'ping' }, call(3, 'nothing', {})];
    const answered = await answerOf(await send(JSON_ONLY, batch, session, '2025-03-26'));
    expect(answered.type).toBe('application/json');
    const byId = new Map(answered.messages.map((message) => [message.id, message]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3]);
    expect(byId.get(1)!.result).toEqual({ content: [{ type: 'text', text: 'acc: done after 2 steps' }] });
    expect(byId.get(2)!.result).toEqual({});
    expect(byId.get(3)!.error).toMatchObject({ code: -32602 });
  }, 60_000);

  it('answers a client that accepts only SSE with a stream for every answer with a body, the gateway\'s own included', async () => {
    const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sse-only', version: '1' } };
    const opened = await send(SSE_ONLY, { jsonrpc: '2.0', id: 0, method: 'initialize', params });
    const session = opened.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    expect(await answerOf(opened)).toMatchObject({ status: 200, type: 'text/event-stream', messages: [{ id: 0, result: { protocolVersion: '2025-06-18' } }] });
    expect((await send(SSE_ONLY, { jsonrpc: '2.0', method: 'notifications/initialized' }, session!)).status).toBe(202);

    // Relayed from an upstream that answered with nothing before the result; answered by the gateway from its catalog;
    // and an error the gateway makes itself (an unknown tool), at HTTP 200.
    const plain = await answerOf(await send(SSE_ONLY, call(1, 'echo', { text: 'hi' }), session!));
    expect(plain).toEqual({ status: 200, type: 'text/event-stream', messages: [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'acc: hi' }] } }] });
    const listed = await answerOf(await send(SSE_ONLY, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session!));
    expect(listed).toMatchObject({ status: 200, type: 'text/event-stream', messages: [{ id: 2, result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'acc__echo' })]) } }] });
    const pinged = await answerOf(await send(SSE_ONLY, { jsonrpc: '2.0', id: 3, method: 'ping' }, session!));
    expect(pinged).toEqual({ status: 200, type: 'text/event-stream', messages: [{ jsonrpc: '2.0', id: 3, result: {} }] });
    const unknown = await answerOf(await send(SSE_ONLY, call(4, 'nothing', {}), session!));
    expect(unknown).toMatchObject({ status: 200, type: 'text/event-stream', messages: [{ id: 4, error: { code: -32602 } }] });

    // An HTTP error of the transport stays JSON, as the SDK's server answers it whatever the Accept.
    const refused = await answerOf(await send(SSE_ONLY, { jsonrpc: '2.0', id: 5, method: 'ping' }));
    expect(refused).toMatchObject({ status: 400, type: 'application/json', messages: [{ id: null, error: { code: -32600 } }] });
  }, 60_000);
});
