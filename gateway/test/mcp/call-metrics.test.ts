import {
  expectEventually,
  gatewayFronting,
  labelsOf,
  metricSum,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * Every request through a gateway is counted on the edge's /metrics as its call record says (method, outcome, error
 * class) and timed, with labels a client cannot multiply: a method the gateway does not know is `other`
 * (docs/operations.md). Real platform, SDK upstream, plain HTTP client; read on the ops listener as Prometheus would.
 */
describe('MCP gateway call metrics', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;
  let session: string;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha', jsonResponses: true });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.1/32', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'metrics', [{ slug: 'alpha', url: upstream.url }]);
    session = await rawMcpSession(platform, gateway);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const metrics = () => platform.opsUrl('/metrics');
  const calls = (labels: Record<string, string>) => metricSum(metrics(), 'platform_mcp_call_duration_seconds_count', labels);
  /** Calls answered within 60 s (the histogram's last bound): every call of this test. */
  const timed = (labels: Record<string, string>) => metricSum(metrics(), 'platform_mcp_call_duration_seconds_bucket', { ...labels, le: '60' });
  const call = async (method: string, params: Record<string, unknown> = {}) => {
    const answer = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method, params }, session, '2025-06-18');
    expect(answer.status).toBe(200);
    return (await answer.json()) as { result?: Record<string, unknown>; error?: { code: number } };
  };

  it('counts and times each call by method, outcome and error class', async () => {
    const ok = { method: 'tools/call', outcome: 'ok', error_class: '' };
    const refused = { method: 'tools/call', outcome: 'refused', error_class: 'not_exposed' };
    const toolError = { method: 'tools/call', outcome: 'error', error_class: 'tool_error' };
    const [okBefore, refusedBefore, toolErrorBefore, timedBefore] = await Promise.all([calls(ok), calls(refused), calls(toolError), timed({ method: 'tools/call', outcome: 'ok' })]);

    for (const text of ['a', 'b']) expect((await call('tools/call', { name: 'alpha__echo', arguments: { text } })).result).toBeDefined();
    expect((await call('tools/call', { name: 'alpha__nowhere', arguments: {} })).error?.code).toBe(-32602);
    expect((await call('tools/call', { name: 'alpha__fail', arguments: {} })).result?.isError).toBe(true);

    // Counted as the call's record is made, once its answer is out: soon after the client has it.
    await expectEventually(async () => {
      expect(await calls(ok)).toBe(okBefore + 2);
      expect(await calls(refused)).toBe(refusedBefore + 1);
      expect(await calls(toolError)).toBe(toolErrorBefore + 1);
      expect(await timed({ method: 'tools/call', outcome: 'ok' })).toBe(timedBefore + 2);
    });
  });

  it("counts a method the gateway does not know as 'other', so clients cannot add series", async () => {
    const unknown = { method: 'other', outcome: 'error', error_class: 'method_not_found' };
    const before = await calls(unknown);
    for (const method of ['x/first-invented-method', 'x/second-invented-method']) expect((await call(method)).error?.code).toBe(-32601);

    await expectEventually(async () => expect(await calls(unknown)).toBe(before + 2));
    const text = await (await fetch(metrics())).text();
    expect(text).not.toContain('invented-method');
    const methods = new Set(
      text
        .split('\n')
        .filter((line) => line.startsWith('platform_mcp_call_duration_seconds_count{'))
        .map((line) => labelsOf(line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'))).method),
    );
    expect([...methods].sort()).toEqual(expect.arrayContaining(['initialize', 'other', 'tools/call']));
    for (const method of methods) expect(method === 'other' || /^[a-z]+(\/[a-zA-Z]+)*$/.test(method!)).toBe(true);
  });
});
