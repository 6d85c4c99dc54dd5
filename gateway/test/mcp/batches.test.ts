import {
  eventually,
  gatewayFronting,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
  watchListenerOverflow,
} from '@platform/test';

/**
 * JSON-RPC batches through `/mcp/{slug}` (docs/gateway.md): accepted in sessions of the protocol versions that have
 * them (before 2025-06-18, where servers MUST accept them), refused in later ones. Raw HTTP: the SDK client sends no
 * batches.
 */
describe('MCP gateway data plane: JSON-RPC batches', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'delta' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'batch', [{ slug: 'delta', url: upstream.url }]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const post = (body: unknown, session?: string, protocolVersion?: string) => postMcp(platform, gateway, body, session, protocolVersion);
  const sessionOf = (protocolVersion: string) => rawMcpSession(platform, gateway, protocolVersion);

  /** The JSON-RPC messages of an SSE body. */
  const messagesOf = (body: string) =>
    body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { id?: number; result?: Record<string, unknown>; error?: { code: number } });

  it('answers the requests of a 2025-03-26 batch on one stream, each by its id, and records each', async () => {
    const session = await sessionOf('2025-03-26');
    const response = await post(
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'delta__echo', arguments: { text: 'one' } } },
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'delta__nothing', arguments: {} } },
      ],
      session,
      '2025-03-26',
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const answers = messagesOf(await response.text());
    expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2, 3]);
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    expect(byId.get(1)!.result).toMatchObject({ content: [{ type: 'text', text: 'delta: one' }] });
    expect(byId.get(2)!.result).toEqual({});
    expect(byId.get(3)!.error).toMatchObject({ code: -32602 });

    const recorded = await eventually(async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { method: string; exposedName: string; outcome: string }[];
      return calls.filter((call) => call.exposedName === 'delta__echo' || call.exposedName === 'delta__nothing' || call.method === 'ping');
    }, (calls) => calls.length === 3);
    expect(recorded.map((call) => `${call.method} ${call.exposedName} ${call.outcome}`).sort()).toEqual([
      'ping  ok',
      'tools/call delta__echo ok',
      'tools/call delta__nothing refused',
    ]);
  });

  it('forwards a batch of more requests than Node allows listeners on one emitter, answering all without a leak warning', async () => {
    // More than Node's 10, well under the person's cap on requests in flight (MCP_MAX_REQUESTS_PER_PERSON, 256).
    const count = 16;
    const session = await sessionOf('2025-03-26');
    const watch = watchListenerOverflow((req) => req.method === 'POST' && req.url === `/mcp/${gateway.gatewaySlug}`);
    try {
      const batch = Array.from({ length: count }, (_, n) => ({ jsonrpc: '2.0', id: n + 1, method: 'tools/call', params: { name: 'delta__echo', arguments: { text: `n${n}` } } }));
      const response = await post(batch, session, '2025-03-26');
      expect(response.status).toBe(200);
      const answers = messagesOf(await response.text());
      expect(answers.map((answer) => answer.id).sort((a, b) => a! - b!)).toEqual(Array.from({ length: count }, (_, n) => n + 1));
      for (const answer of answers) expect(answer.result).toMatchObject({ content: [{ type: 'text', text: `delta: n${answer.id! - 1}` }] });
      // Each forwarded request stops when the client goes: one listener on the shared response hears that for all.
      expect(watch.overflows).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('stops every forwarded request of a batch when the client goes, recording each as cancelled', async () => {
    const count = 12;
    const session = await sessionOf('2025-03-26');
    const batch = Array.from({ length: count }, (_, n) => ({ jsonrpc: '2.0', id: n + 1, method: 'tools/call', params: { name: 'delta__slow', arguments: { steps: 3, stepMs: 2_000 } } }));
    const leaving = new AbortController();
    const response = await fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify(batch),
      signal: leaving.signal,
    });
    expect(response.status).toBe(200);
    leaving.abort();

    // Not stopped, each would run to its answer and be recorded ok.
    const recorded = await eventually(
      async () => ((await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { exposedName: string; outcome: string }[]).filter((call) => call.exposedName === 'delta__slow'),
      (calls) => calls.length === count,
    );
    expect(recorded.map((call) => call.outcome)).toEqual(Array(count).fill('cancelled'));
  }, 60_000);

  it('answers a batch of notifications alone with 202', async () => {
    const session = await sessionOf('2025-03-26');
    const response = await post([{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], session, '2025-03-26');
    expect(response.status).toBe(202);
  });

  it('refuses an empty batch, one over 100 messages, one holding initialize, and any batch in a session of a later version', async () => {
    const old = await sessionOf('2025-03-26');
    const refusal = async (response: Response) => ({ status: response.status, body: (await response.json()) as { error: { code: number; message: string } } });

    const empty = await refusal(await post([], old, '2025-03-26'));
    expect(empty).toMatchObject({ status: 400, body: { error: { code: -32600, message: expect.stringContaining('empty batch') } } });
    const withInitialize = await refusal(
      await post([{ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }], old, '2025-03-26'),
    );
    expect(withInitialize).toMatchObject({ status: 400, body: { error: { code: -32600, message: expect.stringContaining('initialize cannot be part of a batch') } } });
    // At most 100 messages: each request runs at once with its own upstream connection.
    const pings = (count: number) => Array.from({ length: count }, (_, index) => ({ jsonrpc: '2.0', id: index + 1, method: 'ping' }));
    const tooMany = await refusal(await post(pings(101), old, '2025-03-26'));
    expect(tooMany).toMatchObject({ status: 400, body: { error: { code: -32600, message: expect.stringContaining('at most 100 messages') } } });
    const most = await post(pings(100), old, '2025-03-26');
    expect(most.status).toBe(200);
    expect(((await most.text()).match(/"result":\{\}/g) ?? []).length).toBe(100);

    const current = await sessionOf('2025-06-18');
    const later = await refusal(await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], current, '2025-06-18'));
    expect(later).toMatchObject({ status: 400, body: { error: { code: -32600, message: expect.stringContaining('batches are not part of protocol version 2025-06-18') } } });
  });
});
