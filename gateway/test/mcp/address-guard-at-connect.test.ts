import {
  describeWith,
  expectEventually,
  gatewayFronting,
  startEdgeReplica,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * The address guard judges the address the data plane connects to, when it connects (docs/gateway.md, Upstream
 * credentials; docs/architecture.md: checked on the resolved address at connect time), not the URL as it was judged
 * when the server was registered: a host name that later resolves somewhere refused (DNS rebinding to loopback or
 * the metadata address) is refused then. Here the name stays the same and the edge that uses it refuses its address:
 * an edge replica whose ALLOWED_INTERNAL_NETWORKS leaves out the loopback network the catalog allowed at registration.
 * (A resolver that changes its answer between the two checks: packages/runtime/test/net/guarded-lookup.test.ts.)
 */
describeWith('postgres', 'MCP data plane: the address guard at connect time', () => {
  let platform: TestPlatform;
  let replica: Awaited<ReturnType<typeof startEdgeReplica>>;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8,::1/128', MCP_PUBLISH_POLICY: 'self_publish' } });
    // A host name, resolved by the guard's lookup at every connection (a literal IP is judged without one).
    const byName = upstream.url.replace('127.0.0.1', 'localhost');
    gateway = await gatewayFronting(platform, 'guard', [{ slug: 'alpha', url: byName }]);
    replica = await startEdgeReplica(platform, { ALLOWED_INTERNAL_NETWORKS: '' });
  }, 120_000);

  afterAll(async () => {
    await replica?.stop();
    await platform?.stop();
    await upstream?.close();
  });

  /** POSTs one message to `/mcp/{slug}` of the edge at `base`; the response. */
  const post = (base: (path: string) => string, message: unknown, session?: string) =>
    fetch(base(`/mcp/${gateway.gatewaySlug}`), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(message),
    });
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
  const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'alpha__echo', arguments: { text: 'hi' } } });

  it('refuses, when it connects, an address that passed when the server was registered; the upstream hears nothing', async () => {
    // Where the address is allowed, the name serves.
    const allowed = (await post(platform.url, initialize)).headers.get('mcp-session-id')!;
    expect(await (await post(platform.url, echo(1), allowed)).json()).toMatchObject({ id: 1, result: { content: [{ text: 'alpha: hi' }] } });

    const before = upstream.requests.length;
    const initialized = await post(replica.url, initialize);
    expect(initialized.status).toBe(200);
    const session = initialized.headers.get('mcp-session-id')!;
    expect(await (await post(replica.url, echo(2), session)).json()).toMatchObject({
      id: 2,
      error: { code: -32010, message: expect.stringMatching(/alpha.*address the gateway may not reach/), data: { errorClass: 'address_not_allowed' } },
    });
    expect(upstream.requests.length).toBe(before);

    await expectEventually(async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=50`)).body.data as { exposedName: string; errorClass: string }[];
      expect(calls).toEqual(expect.arrayContaining([expect.objectContaining({ exposedName: 'alpha__echo', errorClass: 'address_not_allowed' })]));
    }, 30_000);
  }, 120_000);
});
