import {
  expectEventually,
  gatewayAccessToken,
  gatewayUser,
  publishedMcpServer,
  setGatewayServers,
  startMcpUpstream,
  startTestPlatform,
  unique,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * Stopping the edge while a client holds its MCP GET stream open (docs/architecture.md, Stopping). The stream lives
 * as long as the client wants; the HTTP listener's drain would wait for it until its grace ran out, leaving the rest
 * of the stop (the call-record flush, the gRPC drain, relays, consumers) only what remained of the exit timer.
 */
describe('stopping the platform with an open MCP GET stream', () => {
  let platform: TestPlatform | undefined;
  let upstream: McpUpstream | undefined;

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  it('ends the stream cleanly as the stop begins instead of waiting out the drain grace', async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    // A drain grace (40 % of this) far longer than the test: a stop that waited for it would time the test out.
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', SHUTDOWN_TIMEOUT_SECONDS: '3600' } });
    const teamSlug = unique('stop-team');
    const gatewaySlug = unique('stop-gw');
    const user = await gatewayUser(platform, { email: `${unique('stop')}@example.test`, teamSlug, gatewaySlug });
    const serverId = await publishedMcpServer(user.person.client, teamSlug, { slug: 'alpha', url: upstream.url });
    await setGatewayServers(user.person.client, teamSlug, gatewaySlug, [{ serverId }]);
    const token = await gatewayAccessToken(platform, user.person.client.cookieHeader(), gatewaySlug);
    const endpoint = platform.url(`/mcp/${gatewaySlug}`);

    const post = (body: unknown, session?: string) =>
      fetch(endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) },
        body: JSON.stringify(body),
      });
    const initialized = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(initialized.status).toBe(200);
    await initialized.text();
    const session = initialized.headers.get('mcp-session-id')!;
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);

    const before = upstream.requests.length;
    const stream = await fetch(endpoint, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': session } });
    expect(stream.status).toBe(200);
    // The stream is relaying: the gateway opened the upstream's GET stream for it.
    await expectEventually(() => expect(upstream!.requests.slice(before).some((request) => request.method === 'GET')).toBe(true));
    const ended = readToEnd(stream);

    const stopping = platform.stop();
    platform = undefined;
    await stopping;
    // A complete response, which the client may open again on another replica; not a connection cut at the grace.
    expect(await ended).toBe('ended');
  }, 120_000);
});

/** How the response's body finished: a clean end, or broken off. */
async function readToEnd(response: Response): Promise<'ended' | 'broken'> {
  const reader = response.body!.getReader();
  try {
    for (;;) if ((await reader.read()).done) return 'ended';
  } catch {
    return 'broken';
  }
}
