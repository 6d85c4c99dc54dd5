import {
  adminClient,
  ApiClient,
  gatewayAccessToken,
  gatewayFronting,
  rawMcpSession,
  startMcpUpstream,
  startTestPlatform,
  unique,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/**
 * A client's session id belongs to one gateway and one person (docs/gateway.md, Sessions across replicas): presented
 * on another gateway, even by the same person, or by another person, it is refused as an unknown session is, with
 * the same answer, so the refusal tells nothing of whether the session exists; and the refusal changes nothing.
 */
describe('MCP data plane: a session id on another gateway or of another person', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let gateway: FrontedGateway;
  /** The same person's second gateway, in the same team, and its token. */
  let other: Pick<FrontedGateway, 'gatewaySlug' | 'token'>;
  /** Another member of the team, with a token for the first gateway. */
  let memberToken: string;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'scope', [{ slug: 'alpha', url: upstream.url }]);
    const otherSlug = unique('scope-other-gw');
    const created = await gateway.owner.post(`/v1/teams/${gateway.teamSlug}/gateways`, { slug: otherSlug, name: 'Other', servers: [{ serverId: gateway.serverIds[0] }] });
    expect(created.status).toBe(201);
    other = { gatewaySlug: otherSlug, token: await gatewayAccessToken(platform, gateway.owner.cookieHeader(), otherSlug) };

    const admin = await adminClient(platform);
    const password = 'a long enough password 123';
    const member = await admin.post('/v1/admin/people', { email: `${unique('scope-member')}@example.test`, displayName: 'Member', password });
    expect(member.status).toBe(201);
    expect((await admin.post(`/v1/teams/${gateway.teamSlug}/members`, { personId: member.body.data.id, role: 'member' })).status).toBe(201);
    const memberClient = new ApiClient(platform);
    expect((await memberClient.signIn(member.body.data.email as string, password)).status).toBe(200);
    memberToken = await gatewayAccessToken(platform, memberClient.cookieHeader(), gateway.gatewaySlug);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await upstream?.close();
  });

  /** One request to `/mcp/{slug}` with `token` and session id `session`: its status and body. */
  async function send(method: 'POST' | 'GET' | 'DELETE', slug: string, token: string, session: string): Promise<{ status: number; body: string }> {
    const response = await fetch(platform.url(`/mcp/${slug}`), {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) } : {}),
    });
    return { status: response.status, body: await response.text() };
  }

  it('refuses it on another gateway of the same person and to another person, exactly as an unknown session, and changes nothing', async () => {
    const session = await rawMcpSession(platform, gateway);
    // An id the gateway never issued: what "no such session" looks like.
    const unknown = `${session.slice(0, -4)}AAAA`;
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      const refusal = await send(method, gateway.gatewaySlug, gateway.token, unknown);
      expect(refusal.status).toBe(404);
      expect(await send(method, other.gatewaySlug, other.token, session)).toEqual(refusal);
      expect(await send(method, gateway.gatewaySlug, memberToken, session)).toEqual(refusal);
    }
    // Neither DELETE ended it: it still serves its own person on its own gateway.
    const served = await send('POST', gateway.gatewaySlug, gateway.token, session);
    expect(served.status).toBe(200);
    expect(served.body).toContain('alpha__echo');
  });
});
