import { expectEventually, gatewayFronting, postMcp, startMcpUpstream, startTestPlatform, unique, type FrontedGateway, type McpUpstream, type TestPlatform } from '@platform/test';

const GRINNING = '\u{1F600}'; // one character, two UTF-16 units

/**
 * `initialize` keeps the client's name (clientInfo.name, which every call record of the session carries) to 200
 * characters and its version to 60, cut between characters: half a surrogate pair is text PostgreSQL refuses. Seen
 * end to end through the real edge: what the upstream is told at its own initialize (the gateway passes the client's
 * info on) and what the call record read back through the API carries.
 */
describe('initialize: clientInfo', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'info', [{ slug: 'alpha', url: upstream.url }]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  /** Opens a session with `clientInfo`; returns the clientInfo the upstream received and the session's call records. */
  async function initializeWith(clientInfo: Record<string, unknown>): Promise<{ upstreamSaw: { name: string; version: string }; recordedName: () => Promise<string | undefined> }> {
    const initialized = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo } });
    expect(initialized.status).toBe(200);
    await initialized.text();
    const session = initialized.headers.get('mcp-session-id')!;
    expect((await postMcp(platform, gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, session, '2025-06-18')).status).toBe(202);
    const marker = unique('call');
    const called = await postMcp(platform, gateway, { jsonrpc: '2.0', id: marker, method: 'tools/call', params: { name: 'alpha__clientinfo', arguments: {} } }, session, '2025-06-18');
    expect(called.status).toBe(200);
    const body = await called.text();
    // JSON or one SSE event: the answer is the last JSON-RPC message either way.
    const answer = JSON.parse(body.trim().startsWith('{') ? body : body.split('\n').filter((line) => line.startsWith('data: ')).at(-1)!.slice('data: '.length)) as {
      result: { content: { text: string }[] };
    };
    const upstreamSaw = JSON.parse(answer.result.content[0]!.text) as { name: string; version: string };
    const recordedName = async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { exposedName: string; clientName: string }[];
      // Newest first: this session's call is the newest of the tool's.
      return calls.find((call) => call.exposedName === 'alpha__clientinfo')?.clientName;
    };
    return { upstreamSaw, recordedName };
  }

  it('cuts the name and version by characters, never inside a surrogate pair', async () => {
    const { upstreamSaw, recordedName } = await initializeWith({ name: `${'n'.repeat(199)}${GRINNING}more`, version: `${'v'.repeat(59)}${GRINNING}1` });
    expect(upstreamSaw).toMatchObject({ name: `${'n'.repeat(199)}${GRINNING}`, version: `${'v'.repeat(59)}${GRINNING}` });
    // PostgreSQL took the cut name: the record was stored and reads back as it was cut.
    await expectEventually(async () => expect(await recordedName()).toBe(`${'n'.repeat(199)}${GRINNING}`));
  });

  it('refuses capabilities over 4096 characters of JSON (they are sealed into the session id), and takes ones within', async () => {
    const initialize = (capabilities: unknown) =>
      postMcp(platform, gateway, { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'big', version: '1' } } });
    const tooBig = await initialize({ experimental: { padding: 'x'.repeat(4096) } });
    expect(tooBig.status).toBe(200);
    expect(tooBig.headers.get('mcp-session-id')).toBeNull();
    expect(await tooBig.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: expect.stringContaining('params.capabilities may take at most 4096 characters') } });

    const within = await initialize({ elicitation: {}, roots: { listChanged: true }, experimental: { padding: 'x'.repeat(3000) } });
    expect(within.status).toBe(200);
    expect(within.headers.get('mcp-session-id')).toEqual(expect.any(String));
    expect(await within.json()).toMatchObject({ id: 7, result: { protocolVersion: '2025-06-18' } });
  });

  it('refuses an initialize without what MCP requires of it (-32602, no session opened)', async () => {
    const valid = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'strict', version: '1' } };
    for (const [params, problem] of [
      [{ ...valid, protocolVersion: undefined }, 'params.protocolVersion must be a string'],
      [{ ...valid, capabilities: ['sampling'] }, 'params.capabilities must be an object'],
      [{ ...valid, capabilities: undefined }, 'params.capabilities must be an object'],
      [{ ...valid, clientInfo: undefined }, 'params.clientInfo must be an object with a name and a version'],
      [{ ...valid, clientInfo: { name: 'no-version' } }, 'params.clientInfo must be an object with a name and a version'],
    ] as const) {
      const refused = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 9, method: 'initialize', params });
      expect([problem, refused.headers.get('mcp-session-id')]).toEqual([problem, null]);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: `Invalid params: ${problem}${problem.endsWith('version') ? ' (strings)' : ''}` } });
    }
  });

  it('keeps a name within the bound as it is', async () => {
    const { upstreamSaw, recordedName } = await initializeWith({ name: `claude ${GRINNING}`, version: '1.2.3' });
    expect(upstreamSaw).toMatchObject({ name: `claude ${GRINNING}`, version: '1.2.3' });
    await expectEventually(async () => expect(await recordedName()).toBe(`claude ${GRINNING}`));
  });
});
