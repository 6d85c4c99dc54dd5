import {
  answer,
  expectEventually,
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

/** An upstream whose `initialize` answers with the session id it is given, and whose one tool answers `pong`. */
async function startUpstreamWithSessionId(sessionId: string): Promise<RawUpstream & { calls: () => number }> {
  let calls = 0;
  const upstream = await startRawUpstream((message, res) => {
    if (message?.method === 'initialize') answer(res, message.id, initializeResult(), { 'mcp-session-id': sessionId });
    else if (message?.method === 'tools/list') answer(res, message.id, { tools: [{ name: 'ping', description: 'Answers pong', inputSchema: { type: 'object' } }] });
    else if (message?.method === 'tools/call') {
      calls += 1;
      answer(res, message.id, { content: [{ type: 'text', text: 'pong' }] });
    } else if (message?.id !== undefined) answer(res, message.id, {});
    else return false;
    return true;
  });
  return { ...upstream, calls: () => calls };
}

/**
 * An upstream's session id is sealed into every client session id of its gateways (docs/gateway.md, Sessions): one
 * that is too long, or not visible ASCII, fails that upstream's calls as a protocol error and leaves the client's
 * session and the gateway's other servers working.
 */
describe('MCP data plane: what an upstream session id may be', () => {
  let platform: TestPlatform;
  let good: McpUpstream;
  let inflating: Awaited<ReturnType<typeof startUpstreamWithSessionId>>;
  let gateway: FrontedGateway;

  beforeAll(async () => {
    good = await startMcpUpstream({ name: 'good' });
    // A session id longer than a request header may be: sealed into the client's, it would break every session.
    inflating = await startUpstreamWithSessionId('s'.repeat(10_000));
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'sid', [
      { slug: 'good', url: good.url },
      { slug: 'inflating', url: inflating.url },
    ]);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.allSettled([good?.close(), inflating?.close()]);
  });

  const call = (session: string, id: number, name: string, args: Record<string, unknown>) =>
    postMcp(platform, gateway, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, session, '2025-06-18');

  it('refuses an oversized upstream session id as that upstream\'s protocol error, keeping the client\'s session small and the other server working', async () => {
    const session = await rawMcpSession(platform, gateway);
    expect(session.length).toBeLessThan(2_000);

    const refused = await call(session, 1, 'inflating__ping', {});
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({ id: 1, error: { code: -32011, message: expect.stringMatching(/inflating.*session id/) } });
    expect(inflating.calls()).toBe(0);

    const served = await call(session, 2, 'good__echo', { text: 'still here' });
    expect(await served.json()).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'good: still here' }] } });

    await expectEventually(async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=50`)).body.data as { exposedName: string; outcome: string; errorClass: string }[];
      expect(calls).toEqual(expect.arrayContaining([expect.objectContaining({ exposedName: 'inflating__ping', outcome: 'error', errorClass: 'protocol_error' })]));
    }, 30_000);
  }, 60_000);
});
