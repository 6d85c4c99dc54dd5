import {
  answer,
  gatewayFronting,
  initializeResult,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startRawUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type RawUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * An upstream that supports task-augmented tool calls (MCP 2025-11-25): a call with `task` gets a task back, one
 * without gets the params it arrived with as its text.
 */
function startTaskUpstream(): Promise<RawUpstream> {
  return startRawUpstream((raw, res) => {
    const message = raw as { id?: number; method: string; params?: Record<string, unknown> } | undefined;
    if (message?.method === 'initialize') answer(res, message.id, initializeResult({ tools: {}, tasks: { requests: { tools: { call: {} } } } }));
    else if (message?.method === 'tools/list') answer(res, message.id, { tools: [{ name: 'job', description: 'Runs a job', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } }] });
    else if (message?.method === 'tools/call' && message.params?.task) {
      const now = new Date().toISOString();
      answer(res, message.id, { task: { taskId: 'task-1', status: 'working', createdAt: now, lastUpdatedAt: now, ttl: 60_000 } });
    } else if (message?.method === 'tools/call') answer(res, message.id, { content: [{ type: 'text', text: JSON.stringify(message.params) }] });
    else if (message?.id !== undefined) answer(res, message.id, {});
    else return false;
    return true;
  });
}

/**
 * `/mcp/{slug}` against the MCP Streamable HTTP transport and base protocol (2025-03-26 to 2025-11-25) as clients
 * rely on it: statuses and bodies of the transport's refusals, the session's life, JSON-RPC errors and ids,
 * pass-through of `_meta`, and what `initialize` advertises. Raw HTTP, so that every header is the test's choice.
 */
describe('MCP gateway data plane: transport conformance', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let tasks: RawUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    [upstream, tasks] = await Promise.all([startMcpUpstream({ name: 'tau' }), startTaskUpstream()]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'conf', [
      { slug: 'tau', url: upstream.url },
      { slug: 'tasky', url: tasks.url },
    ]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.allSettled([upstream?.close(), tasks?.close()]);
  });

  const endpoint = () => platform.url(`/mcp/${gateway.gatewaySlug}`);
  /** A request with exactly these headers besides the token. */
  const send = (method: string, headers: Record<string, string>, body?: string) =>
    fetch(endpoint(), { method, headers: { authorization: `Bearer ${gateway.token}`, ...headers }, ...(body !== undefined ? { body } : {}) });
  const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

  /** The JSON-RPC messages of an SSE body. */
  const messagesOf = (body: string) =>
    body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number } });

  it('answers notifications and responses with 202 and no body', async () => {
    const session = await rawMcpSession(platform, gateway);
    const accepted = await postMcp(platform, gateway, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, session);
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe('');
    // A cancellation of a request the gateway answered itself (a ping, never forwarded) is accepted and changes nothing.
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 5, method: 'ping' }, session)).status).toBe(200);
    const cancelled = await postMcp(platform, gateway, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'late' } }, session);
    expect(cancelled.status).toBe(202);
    expect(await cancelled.text()).toBe('');
    expect(await (await postMcp(platform, gateway, { jsonrpc: '2.0', id: 6, method: 'ping' }, session)).json()).toEqual({ jsonrpc: '2.0', id: 6, result: {} });
  });

  it('refuses a POST whose Accept takes neither JSON nor SSE (406), and serves clients that accept one of them', async () => {
    const session = await rawMcpSession(platform, gateway);
    const refused = await send('POST', { ...JSON_HEADERS, accept: 'text/html', 'mcp-session-id': session }, PING);
    expect(refused.status).toBe(406);
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/Not Acceptable/) } });
    // Real clients send one of the two (or a wildcard, or none): they are served, as before.
    for (const accept of ['application/json', 'text/event-stream', '*/*', 'application/*;q=0.9, text/plain']) {
      const served = await send('POST', { ...JSON_HEADERS, accept, 'mcp-session-id': session }, PING);
      expect([accept, served.status]).toEqual([accept, 200]);
    }
    const none = await send('POST', { 'content-type': 'application/json', 'mcp-session-id': session }, PING);
    expect(none.status).toBe(200);
  });

  it('refuses a POST whose body is not declared JSON (415)', async () => {
    const session = await rawMcpSession(platform, gateway);
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'text/plain; a=application/json']) {
      const refused = await send('POST', { ...JSON_HEADERS, 'content-type': contentType, 'mcp-session-id': session }, PING);
      expect([contentType, refused.status]).toEqual([contentType, 415]);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/Unsupported Media Type/) } });
    }
    const missing = await fetch(endpoint(), { method: 'POST', headers: { authorization: `Bearer ${gateway.token}`, accept: JSON_HEADERS.accept, 'mcp-session-id': session }, body: new Blob([PING]) });
    expect(missing.status).toBe(415);
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
      expect((await send('POST', { ...JSON_HEADERS, 'content-type': contentType, 'mcp-session-id': session }, PING)).status).toBe(200);
    }
  });

  it('tells a missing session (400) from an unknown or ended one (404), and ends a session on DELETE for every method', async () => {
    const session = await rawMcpSession(platform, gateway);
    expect((await send('POST', JSON_HEADERS, PING)).status).toBe(400);
    expect((await send('GET', { accept: 'text/event-stream' })).status).toBe(400);
    expect((await send('DELETE', {})).status).toBe(400);
    for (const unknown of [`${session.slice(0, -4)}AAAA`, 'not-a-session']) {
      const refused = await send('POST', { ...JSON_HEADERS, 'mcp-session-id': unknown }, PING);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    }
    const ended = await send('DELETE', { 'mcp-session-id': session });
    expect(ended.status).toBe(200);
    expect((await send('POST', { ...JSON_HEADERS, 'mcp-session-id': session }, PING)).status).toBe(404);
    expect((await send('GET', { accept: 'text/event-stream', 'mcp-session-id': session })).status).toBe(404);
    expect((await send('DELETE', { 'mcp-session-id': session })).status).toBe(404);
    // The client then initializes anew, as the transport tells it to.
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, await rawMcpSession(platform, gateway))).status).toBe(200);
  });

  it('opens a new session for an initialize sent with a session id, and leaves the old one alone', async () => {
    const session = await rawMcpSession(platform, gateway);
    const again = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, session);
    expect(again.status).toBe(200);
    const renewed = again.headers.get('mcp-session-id');
    expect(renewed).toBeTruthy();
    expect(renewed).not.toBe(session);
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, session)).status).toBe(200);
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'ping' }, renewed!)).status).toBe(200);
  });

  it('takes the negotiated version when MCP-Protocol-Version is absent, and refuses an unsupported one on every method', async () => {
    const session = await rawMcpSession(platform, gateway, '2025-03-26');
    // Without the header, the session's own version decides: batches are those of 2025-03-26.
    const batch = await postMcp(platform, gateway, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], session);
    expect(batch.status).toBe(200);
    expect(messagesOf(await batch.text())).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    for (const [method, headers] of [['POST', JSON_HEADERS], ['GET', { accept: 'text/event-stream' }], ['DELETE', {}]] as const) {
      const refused = await send(method, { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2099-01-01' }, method === 'POST' ? PING : undefined);
      expect([method, refused.status]).toEqual([method, 400]);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/unsupported protocol version/) } });
    }
  });

  it('refuses a GET that does not accept text/event-stream with 406', async () => {
    const session = await rawMcpSession(platform, gateway);
    const refused = await send('GET', { accept: 'application/json', 'mcp-session-id': session });
    expect(refused.status).toBe(406);
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringMatching(/text\/event-stream/) } });
  });

  it('answers unparseable bodies with -32700 and invalid messages with -32600, both without id', async () => {
    const session = await rawMcpSession(platform, gateway);
    const post = (body: string) => send('POST', { ...JSON_HEADERS, 'mcp-session-id': session }, body);
    const unparseable = await post('{"jsonrpc": "2.0", "id": 1, "method": "ping"');
    expect(unparseable.status).toBe(400);
    expect(await unparseable.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
    for (const invalid of [{ jsonrpc: '2.0', id: 1 }, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: null, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }, 42]) {
      const refused = await post(JSON.stringify(invalid));
      expect([invalid, refused.status]).toEqual([invalid, 400]);
      expect(await refused.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } });
    }
    // MCP ids are strings or integers; one past 2^53 - 1 would come back as another number once parsed.
    for (const id of ['9007199254740993', '1.5']) {
      const refused = await post(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
      expect([id, refused.status]).toEqual([id, 400]);
      expect(await refused.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/an id is a string or an integer/) } });
    }
    const largest = await post('{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}');
    expect(await largest.json()).toEqual({ jsonrpc: '2.0', id: 9007199254740991, result: {} });
  });

  it('passes _meta and the progress token through to the upstream and its progress back', async () => {
    const session = await rawMcpSession(platform, gateway);
    const call = await postMcp(
      platform,
      gateway,
      { jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'tau__slow', arguments: { steps: 2, stepMs: 0 }, _meta: { progressToken: 'tok-1' } } },
      session,
    );
    expect(call.status).toBe(200);
    const messages = messagesOf(await call.text());
    expect(messages.filter((message) => message.method === 'notifications/progress').map((message) => message.params)).toEqual([
      { progressToken: 'tok-1', progress: 1, total: 2 },
      { progressToken: 'tok-1', progress: 2, total: 2 },
    ]);
    expect(messages.at(-1)).toMatchObject({ id: 'call-1', result: { content: [{ text: 'tau: done after 2 steps' }] } });
  });

  it('passes every _meta key through, and serves a task-augmented call normally since it declares no tasks', async () => {
    const session = await rawMcpSession(platform, gateway, '2025-11-25');
    const _meta = { progressToken: 'tok-2', 'example.com/trace': 'abc' };
    const call = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'tasky__job', arguments: { n: 1 }, task: { ttl: 60_000 }, _meta } }, session);
    const { result } = (await call.json()) as { result: { content?: { text: string }[] } };
    // The upstream has tasks, but the client cannot follow one here (tasks/get is no method of the gateway's).
    expect(result.content).toBeDefined();
    expect(JSON.parse(result.content![0]!.text)).toEqual({ name: 'job', arguments: { n: 1 }, _meta });
    const polled = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 'task-1' } }, session);
    expect(await polled.json()).toMatchObject({ id: 3, error: { code: -32601 } });
  });

  it('refuses a request whose id is in flight in the session, and the first one still gets its own answer', async () => {
    // A session whose client answers elicitations: the first call stays in flight until the test answers its question.
    const initialized = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
    const session = initialized.headers.get('mcp-session-id')!;
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
    const first = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'tau__ask', arguments: { question: 'Go on?' } } }, session);
    const reader = first.body!.getReader();
    let head = '';
    while (!head.includes('elicitation/create')) head += new TextDecoder().decode((await reader.read()).value);
    const question = messagesOf(head).find((message) => message.method === 'elicitation/create')!;

    const second = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'tau__echo', arguments: { text: 'second' } } }, session);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringMatching(/already in use/), data: { errorClass: 'invalid_request' } } });

    const answered = await postMcp(platform, gateway, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { answer: 'yes' } } }, session);
    expect(answered.status).toBe(202);
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(messagesOf(rest).at(-1)).toMatchObject({ id: 7, result: { content: [{ text: 'tau: the user said yes' }] } });
    // Answered, the id is free again here; a request of another session could use it all along.
    expect(await (await postMcp(platform, gateway, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'tau__echo', arguments: { text: 'again' } } }, session)).json()).toMatchObject({
      id: 7,
      result: { content: [{ text: 'tau: again' }] },
    });
  });

  it('advertises only what it serves at initialize', async () => {
    const initialized = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 'raw', version: '1' } } });
    const { result } = (await initialized.json()) as { result: { protocolVersion: string; capabilities: Record<string, unknown> } };
    expect(result.protocolVersion).toBe('2025-11-25');
    expect(result.capabilities).toEqual({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
      logging: {},
    });
  });
});
