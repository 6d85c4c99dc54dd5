import { expectEventually, gatewayFronting, rawMcpSession, readToEnd, startMcpUpstream, startTestPlatform, type McpUpstream, type TestPlatform } from '@platform/test';

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
    const gateway = await gatewayFronting(platform, 'stop', [{ slug: 'alpha', url: upstream.url }]);
    const { token } = gateway;
    const endpoint = platform.url(`/mcp/${gateway.gatewaySlug}`);
    const session = await rawMcpSession(platform, gateway);

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
