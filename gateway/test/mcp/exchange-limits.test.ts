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

/**
 * The gateway's limit on one request in all, short enough for a test (MCP_MAX_EXCHANGE_SECONDS), and long enough that
 * a loaded machine's overhead around a relayed question's answer (asked below to wait 2 s) stays well inside it.
 */
const MAX_EXCHANGE_SECONDS = 6;

/**
 * How long a forwarded request may last (docs/gateway.md, Timeouts): the server's timeout bounds each silence of the
 * upstream, MCP_MAX_EXCHANGE_SECONDS the whole exchange however often the upstream reports progress, and the upstream
 * hears a `notifications/cancelled` for a request the gateway gave up on.
 */
describe('MCP data plane: how long one request may take', () => {
  let platform: TestPlatform;
  let chatty: McpUpstream;
  let silent: McpUpstream;
  let gateway: FrontedGateway;
  let client: Client;

  beforeAll(async () => {
    [chatty, silent] = await Promise.all([startMcpUpstream({ name: 'chatty' }), startMcpUpstream({ name: 'silent' })]);
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_MAX_EXCHANGE_SECONDS: String(MAX_EXCHANGE_SECONDS) },
    });
    gateway = await gatewayFronting(platform, 'limits', [
      { slug: 'chatty', url: chatty.url, timeoutSeconds: 2 },
      { slug: 'silent', url: silent.url, timeoutSeconds: 1 },
    ]);
    ({ client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await platform?.stop();
    await Promise.allSettled([chatty?.close(), silent?.close()]);
  });

  it('ends a request whose upstream keeps reporting progress at the gateway\'s limit, and cancels it upstream', async () => {
    const progress: number[] = [];
    // Progress every 0.5 s keeps the 2 s silence limit from firing; 20 steps would take 10 s, past the 6 s limit.
    const outcome = await client
      .callTool({ name: 'chatty__slow', arguments: { steps: 20, stepMs: 500 } }, undefined, { onprogress: (p) => progress.push(p.progress), timeout: 30_000 })
      .catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: -32001, message: expect.stringMatching(new RegExp(`chatty.*did not finish within the gateway's limit of ${MAX_EXCHANGE_SECONDS} s`)) });
    // Progress passed through until the limit: the upstream was alive, only the whole exchange was too long.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.length).toBeLessThan(20);
    await expectEventually(() => expect(chatty.cancelledCalls).toBe(1), 10_000);
    await expectEventually(async () => {
      const calls = (await gateway.owner.get(`/v1/teams/${gateway.teamSlug}/calls?limit=100`)).body.data as { exposedName: string; outcome: string; errorClass: string }[];
      expect(calls).toContainEqual(expect.objectContaining({ exposedName: 'chatty__slow', outcome: 'timeout', errorClass: 'timeout' }));
    }, 30_000);
  }, 60_000);

  it('cancels upstream a request it stopped waiting for after the server\'s timeout', async () => {
    // No progress asked for: the upstream is silent for 2.5 s, past its 1 s timeout.
    const outcome = await client.callTool({ name: 'silent__slow', arguments: { steps: 2, stepMs: 2_500 } }, undefined, { timeout: 30_000 }).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ code: -32001, message: expect.stringMatching(/silent.*did not answer within 1 s/) });
    await expectEventually(() => expect(silent.cancelledCalls).toBe(1), 10_000);
  }, 60_000);

  it('waits longer than the server\'s timeout for the client to answer a relayed question', async () => {
    const { client: asked } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token, { capabilities: { elicitation: {} } });
    try {
      asked.setRequestHandler(ElicitRequestSchema, async () => {
        // A person reads the question and types: twice silent's 1 s timeout.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return { action: 'accept', content: { answer: 'yes, after a while' } };
      });
      const result = await asked.callTool({ name: 'silent__ask', arguments: { question: 'Proceed?' } }, undefined, { timeout: 30_000 });
      expect(result.content).toEqual([{ type: 'text', text: 'silent: the user said yes, after a while' }]);
    } finally {
      await asked.close();
    }
  }, 60_000);

  it('lets a request finish that stays within both limits', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'chatty__slow', arguments: { steps: 3, stepMs: 300 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(result.content).toEqual([{ type: 'text', text: 'chatty: done after 3 steps' }]);
    expect(progress).toEqual([1, 2, 3]);
  });
});
