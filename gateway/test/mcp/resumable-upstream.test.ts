import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectMcpClient, eventually, gatewayFronting, startMcpUpstream, startTestPlatform, type FrontedGateway, type McpUpstream, type TestPlatform } from '@platform/test';

/**
 * An upstream with resumable streams (MCP 2025-11-25, the SDK's McpServer with an event store) behind the gateway:
 * every answer stream opens with a priming event (an event id and empty data), and a stream the upstream ends before
 * its answer is picked up again with a GET carrying `Last-Event-ID`.
 */
describe('MCP gateway data plane: resumable upstream streams', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let client: Client;
  let gateway: FrontedGateway;
  const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
  const toolCalls = () => upstream.requests.filter((request) => request.method === 'POST' && request.headers['mcp-session-id']);

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'gamma', resumable: true });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'resume', [{ slug: 'gamma', url: upstream.url }]);
    ({ client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await platform?.stop();
    await upstream?.close();
  });

  it('relays answers whose stream opens with a priming event', async () => {
    expect(textOf(await client.callTool({ name: 'gamma__echo', arguments: { text: 'hi' } }))).toBe('gamma: hi');
    // The upstream sends priming events only to clients of 2025-11-25 or later: the gateway spoke that version.
    expect(toolCalls().at(-1)!.headers['mcp-protocol-version']).toBe(LATEST_PROTOCOL_VERSION);
    expect(LATEST_PROTOCOL_VERSION >= '2025-11-25').toBe(true);
  });

  it('resumes an answer stream the upstream ended early, with Last-Event-ID, and relays what followed', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'gamma__detach', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(textOf(result)).toBe('gamma: finished after resuming');
    expect(progress).toEqual([1, 2]);
    const resumed = upstream.requests.filter((request) => request.method === 'GET' && request.headers['last-event-id']);
    expect(resumed).toHaveLength(1);
    // The resumption is the gateway's, with the upstream session's own headers; the client's token stays at the edge.
    expect(resumed[0]!.headers['mcp-session-id']).toBe(toolCalls().at(-1)!.headers['mcp-session-id']);
    expect(resumed[0]!.headers.authorization).toBeUndefined();
  });

  it('answers a connection dropped half-way with nothing to resume from as an unreachable upstream, and records it so', async () => {
    const failure = await client.callTool({ name: 'gamma__hangup', arguments: {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({ code: -32010, message: expect.stringContaining("Upstream server 'gamma' is unreachable") });
    const record = await eventually(async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { exposedName: string; outcome: string; errorClass: string }[];
      return calls.find((call) => call.exposedName === 'gamma__hangup');
    }, 'the call record of gamma__hangup');
    expect(record).toMatchObject({ outcome: 'upstream_unavailable', errorClass: 'unreachable' });
  });
});
