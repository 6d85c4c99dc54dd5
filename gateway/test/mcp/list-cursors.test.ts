import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  connectMcpClient,
  gatewayFronting,
  postMcp,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

const LISTS = [
  ['tools/list', 'tools'],
  ['prompts/list', 'prompts'],
  ['resources/list', 'resources'],
  ['resources/templates/list', 'resourceTemplates'],
] as const;

/**
 * Pagination of the gateway's lists (docs/gateway.md, Limits and choices): every list is answered in one page and no
 * `nextCursor` is handed out, so a list request carrying a `cursor` names a cursor the gateway never issued, which MCP
 * (pagination) has answered with -32602; one without a cursor is answered in full.
 */
describe('MCP gateway data plane: list cursors', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;
  let session: string;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'pages' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'cursors', [{ slug: 'pages', url: upstream.url }]);
    session = await rawMcpSession(platform, gateway);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  const list = async (method: string, params?: Record<string, unknown>) => {
    const response = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }, session, '2025-06-18');
    expect(response.status).toBe(200);
    const text = await response.text();
    // JSON, or one SSE event where JSON would have gone.
    const json = text.startsWith('{') ? text : text.split('\n').find((line) => line.startsWith('data: '))!.slice('data: '.length);
    return JSON.parse(json) as { id: number; result?: Record<string, unknown[]>; error?: { code: number; message: string; data?: unknown } };
  };

  it.each(LISTS)('answers %s with a cursor with -32602, and without one (or null) in full and with no nextCursor', async (method, key) => {
    for (const cursor of ['eyJwYWdlIjogMn0=', '', 2]) {
      const refused = await list(method, { cursor });
      expect(refused).toMatchObject({ id: 1, error: { code: -32602, data: { errorClass: 'invalid_params' } } });
      expect(refused.error!.message).toBe(`Invalid cursor: this gateway answers ${method} in one page and hands out no cursor; send it without params.cursor`);
      expect(refused.result).toBeUndefined();
    }
    // A null cursor is a first page's request as some clients serialise it (an absent optional field).
    for (const params of [undefined, {}, { cursor: null }, { _meta: { progressToken: 'p' } }]) {
      const answered = await list(method, params);
      expect(answered.error).toBeUndefined();
      expect(answered.result![key]!.length).toBeGreaterThan(0);
      expect(answered.result).not.toHaveProperty('nextCursor');
    }
  });

  it('refuses a next page to the SDK client with an McpError of -32602', async () => {
    const { client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('pages__echo');
      const refused = await client.listTools({ cursor: 'next' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(McpError);
      expect(refused).toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});
