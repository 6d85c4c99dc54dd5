import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  expectEventually,
  gatewayFronting,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/** An upstream whose `initialize` answers with the session id it is given, and whose one tool answers `pong`. */
async function startUpstreamWithSessionId(sessionId: string): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string };
      if (message.method === 'initialize') {
        return json(res, { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'inflating', version: '1' } } }, { 'mcp-session-id': sessionId });
      }
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'tools/list') {
        return json(res, { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'ping', description: 'Answers pong', inputSchema: { type: 'object' } }] } });
      }
      if (message.method === 'tools/call') calls += 1;
      return json(res, { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'pong' }] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
