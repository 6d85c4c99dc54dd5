import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connectMcpClient,
  expectEventually,
  gatewayFronting,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

/** The `notifications/progress` params an upstream received, in order. */
function progressReceivedBy(upstream: McpUpstream): unknown[] {
  return upstream.messages.flatMap((message) => {
    const item = message as { method?: string; params?: unknown };
    return item.method === 'notifications/progress' ? [item.params] : [];
  });
}

/** How many `notifications/roots/list_changed` an upstream received: the gateway sends each to every upstream. */
function rootsChangedReceivedBy(upstream: McpUpstream): number {
  return upstream.messages.filter((message) => (message as { method?: string }).method === 'notifications/roots/list_changed').length;
}

/**
 * Progress tokens of questions upstreams ask the client (docs/gateway.md, Sessions across replicas): MCP lets either
 * side ask for progress on its requests. The client's progress on a relayed question goes to the upstream that asked
 * it alone, under that upstream's own token, even when two upstreams picked the same one; progress under a token the
 * gateway never handed out goes nowhere; progress on the client's own requests comes back as before.
 */
describe('MCP gateway data plane: progress of relayed questions', () => {
  let platform: TestPlatform;
  let alpha: McpUpstream;
  let beta: McpUpstream;
  let gateway: FrontedGateway;
  const open: Client[] = [];

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([startMcpUpstream({ name: 'alpha' }), startMcpUpstream({ name: 'beta' })]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'progress', [
      { slug: 'alpha', url: alpha.url },
      { slug: 'beta', url: beta.url },
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((client) => client.close()));
    await platform?.stop();
    await Promise.allSettled([alpha?.close(), beta?.close()]);
  });

  const connect = async () => {
    const { client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token, { capabilities: { elicitation: {}, roots: { listChanged: true } } });
    open.push(client);
    return client;
  };
  const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

  /**
   * Resolves once both upstreams received the client's roots-changed notice, sent after whatever the test sent
   * before: progress relayed to an upstream would have reached it by then.
   */
  const afterEverythingRelayed = async (client: Client) => {
    const before = [rootsChangedReceivedBy(alpha), rootsChangedReceivedBy(beta)];
    await client.sendRootsListChanged();
    await expectEventually(() => expect([rootsChangedReceivedBy(alpha), rootsChangedReceivedBy(beta)]).toEqual(before.map((count) => count + 1)));
  };

  it('sends the client\'s progress on a question to the upstream that asked it alone, under its own token, though both asked with the same one', async () => {
    const client = await connect();
    const asked: { message: string; progressToken: unknown }[] = [];
    let bothAsked!: () => void;
    const bothInFlight = new Promise<void>((resolve) => (bothAsked = resolve));
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const progressToken = request.params._meta?.progressToken;
      asked.push({ message: request.params.message, progressToken });
      if (asked.length === 2) bothAsked();
      // Both questions are active at once, each with its token: the client answers progress on alpha's only.
      await bothInFlight;
      if (request.params.message === 'alpha asks' && progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2, message: 'half way' } });
      }
      return { action: 'accept', content: { answer: 'yes' } };
    });

    const [fromAlpha, fromBeta] = await Promise.all([
      client.callTool({ name: 'alpha__ask', arguments: { question: 'alpha asks', progressToken: 'same-token' } }),
      client.callTool({ name: 'beta__ask', arguments: { question: 'beta asks', progressToken: 'same-token' } }),
    ]);
    expect(textOf(fromAlpha)).toBe('alpha: the user said yes');
    expect(textOf(fromBeta)).toBe('beta: the user said yes');
    // The client saw two different tokens, as MCP requires of the tokens of active requests.
    const tokens = asked.map((question) => question.progressToken);
    expect(tokens).toHaveLength(2);
    expect(typeof tokens[0]).toBe('string');
    expect(typeof tokens[1]).toBe('string');
    expect(tokens[0]).not.toBe(tokens[1]);

    await expectEventually(() => expect(progressReceivedBy(alpha)).toEqual([{ progressToken: 'same-token', progress: 1, total: 2, message: 'half way' }]));
    await afterEverythingRelayed(client);
    expect(progressReceivedBy(beta)).toEqual([]);
    expect(progressReceivedBy(alpha)).toHaveLength(1);
  }, 60_000);

  it('sends progress under a token the gateway never handed out nowhere', async () => {
    const client = await connect();
    const before = { alpha: progressReceivedBy(alpha).length, beta: progressReceivedBy(beta).length };
    const foreignServer = '00000000-0000-4000-8000-000000000000';
    for (const progressToken of [
      // An upstream's own token, as it chose it.
      'same-token',
      7,
      // Shaped like the gateway's tokens: naming a server that is not the gateway's, and malformed.
      `gw-progress.${foreignServer}.${Buffer.from(JSON.stringify('same-token')).toString('base64url')}`,
      `gw-progress.${gateway.serverIds[0]}.not-base64-json`,
    ]) {
      await client.notification({ method: 'notifications/progress', params: { progressToken, progress: 1 } });
    }
    await afterEverythingRelayed(client);
    expect(progressReceivedBy(alpha)).toHaveLength(before.alpha);
    expect(progressReceivedBy(beta)).toHaveLength(before.beta);
  }, 60_000);

  it('still brings the upstreams\' progress on the client\'s own requests back under the client\'s tokens', async () => {
    const client = await connect();
    const progress: Record<string, number[]> = { alpha: [], beta: [] };
    const slow = (name: 'alpha' | 'beta') =>
      client.callTool({ name: `${name}__slow`, arguments: { steps: 3, stepMs: 10 } }, undefined, { onprogress: (update) => progress[name]!.push(update.progress) });
    const [fromAlpha, fromBeta] = await Promise.all([slow('alpha'), slow('beta')]);
    expect(textOf(fromAlpha)).toBe('alpha: done after 3 steps');
    expect(textOf(fromBeta)).toBe('beta: done after 3 steps');
    expect(progress).toEqual({ alpha: [1, 2, 3], beta: [1, 2, 3] });
  }, 60_000);
});
