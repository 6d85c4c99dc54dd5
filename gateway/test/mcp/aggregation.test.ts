import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  connectMcpClient,
  expectEventually,
  gatewayFronting,
  postMcp,
  rawMcpSession,
  setGatewayServers,
  startMcpUpstream,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';
import { z } from 'zod';

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** The messages of an answer: one JSON message, or the data of each SSE event. */
async function messagesOf(response: Response): Promise<Message[]> {
  const text = await response.text();
  if (text.startsWith('{')) return [JSON.parse(text) as Message];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Message);
}

/** The methods of what an upstream was POSTed, from index `from` on. */
const methodsSentTo = (upstream: McpUpstream, from = 0) => upstream.messages.slice(from).map((message) => (message as Message).method);

/**
 * What one gateway fronting several upstreams says on their behalf (docs/gateway.md, Aggregation), checked against
 * MCP: `logging/setLevel` fanned out only with a level MCP knows, log messages named after their server, and the
 * progress of a request carrying that request's token alone.
 */
describe('MCP gateway data plane: aggregation of several upstreams', () => {
  let platform: TestPlatform;
  let alpha: McpUpstream;
  let beta: McpUpstream;
  let gateway: FrontedGateway;
  const open: Client[] = [];

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([
      startMcpUpstream({
        name: 'alpha',
        configure(server) {
          // Reports progress on another request's token as well as on its own.
          server.registerTool('report', { description: 'Reports progress, also under a token it names', inputSchema: { other: z.string() } }, async ({ other }, extra) => {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: other, progress: 1, total: 2 } });
            const own = extra._meta?.progressToken;
            if (own !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: own, progress: 1, total: 2 } });
            return { content: [{ type: 'text', text: 'reported' }] };
          });
          // Logs without a logger name.
          server.registerTool('whisper', { description: 'Logs a message without a logger name', inputSchema: { message: z.string() } }, async ({ message }, extra) => {
            await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: message } });
            return { content: [{ type: 'text', text: 'whispered' }] };
          });
          // A prompt whose argument completes.
          const colors = ['red', 'rose', 'blue'];
          server.registerPrompt('pick', { description: 'Picks a colour', argsSchema: { color: completable(z.string(), (value) => colors.filter((color) => color.startsWith(value))) } }, ({ color }) => ({
            messages: [{ role: 'user', content: { type: 'text', text: `picked ${color}` } }],
          }));
        },
      }),
      startMcpUpstream({ name: 'beta' }),
    ]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'aggregate', [
      { slug: 'alpha', url: alpha.url },
      { slug: 'beta', url: beta.url },
    ]);
    // alpha under its slug (the default prefix), beta under no prefix: its names as they are.
    await setGatewayServers(gateway.owner, gateway.teamSlug, gateway.gatewaySlug, [{ serverId: gateway.serverIds[0]! }, { serverId: gateway.serverIds[1]!, prefix: '' }]);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((client) => client.close()));
    await platform?.stop();
    await Promise.allSettled([alpha?.close(), beta?.close()]);
  });

  const post = async (session: string, message: Message) => {
    const response = await postMcp(platform, gateway, { jsonrpc: '2.0', ...message }, session, '2025-06-18');
    expect(response.status).toBe(200);
    return messagesOf(response);
  };

  it('answers logging/setLevel with a level MCP does not know with -32602 and sends it to no upstream; a known one to every upstream', async () => {
    const session = await rawMcpSession(platform, gateway);
    const sentBefore = [alpha.messages.length, beta.messages.length] as const;
    for (const level of ['verbose', 'INFO', 7]) {
      const [refused] = await post(session, { id: 1, method: 'logging/setLevel', params: { level } });
      expect(refused).toMatchObject({ id: 1, error: { code: -32602, data: { errorClass: 'invalid_params' } } });
      expect(refused!.error!.message).toBe('params.level must be one of debug, info, notice, warning, error, critical, alert, emergency');
    }
    expect(methodsSentTo(alpha, sentBefore[0])).not.toContain('logging/setLevel');
    expect(methodsSentTo(beta, sentBefore[1])).not.toContain('logging/setLevel');

    expect(await post(session, { id: 2, method: 'logging/setLevel', params: { level: 'warning' } })).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    for (const [upstream, from] of [[alpha, sentBefore[0]], [beta, sentBefore[1]]] as const) {
      expect(upstream.messages.slice(from)).toContainEqual(expect.objectContaining({ method: 'logging/setLevel', params: { level: 'warning' } }));
    }
  });

  it('names each log message after its server as its tools are named, on the request stream and the GET stream', async () => {
    const { client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token);
    open.push(client);
    const logs: { logger?: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push({ logger: notification.params.logger, data: notification.params.data });
    });
    // The standalone message reaches the client once its GET stream is open.
    await expectEventually(async () => {
      await client.callTool({ name: 'alpha__log', arguments: { message: 'from alpha' } });
      expect(logs).toContainEqual({ logger: 'alpha__alpha', data: 'from alpha (standalone)' });
    });
    expect(logs).toContainEqual({ logger: 'alpha__alpha', data: 'from alpha' });
    // A message without a logger name gets the prefix alone.
    await client.callTool({ name: 'alpha__whisper', arguments: { message: 'quietly' } });
    expect(logs).toContainEqual({ logger: 'alpha', data: 'quietly' });
    // Under an empty prefix, beta's names are its own: so are its loggers.
    await expectEventually(async () => {
      await client.callTool({ name: 'log', arguments: { message: 'from beta' } });
      expect(logs).toContainEqual({ logger: 'beta', data: 'from beta (standalone)' });
    });
    expect(logs).toContainEqual({ logger: 'beta', data: 'from beta' });
  });

  it('completes a prompt argument at the upstream of the exposed prompt name, under a prefix or none', async () => {
    const { client } = await connectMcpClient(platform, gateway.gatewaySlug, gateway.token);
    open.push(client);
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'alpha__pick' }, argument: { name: 'color', value: 'r' } });
    expect(completion.completion.values).toEqual(['red', 'rose']);
    // beta's prompt under its own name (an empty prefix): beta answers (its greet has no completions).
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'A' } })).completion.values).toEqual([]);
    // The upstream's own name is not an exposed one.
    const refused = await client.complete({ ref: { type: 'ref/prompt', name: 'pick' }, argument: { name: 'color', value: 'r' } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({ code: -32602 });
    expect((refused as McpError).message).toMatch(/Prompt 'pick' is not available on this gateway/);
  });

  it("relays on a request's stream only the progress of that request's token", async () => {
    const session = await rawMcpSession(platform, gateway);
    const answer = await post(session, { id: 3, method: 'tools/call', params: { name: 'alpha__report', arguments: { other: 'theirs' }, _meta: { progressToken: 'mine' } } });
    expect(answer.filter((message) => message.method === 'notifications/progress').map((message) => message.params!.progressToken)).toEqual(['mine']);
    expect(answer.at(-1)).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: 'reported' }] } });
    // Without a token of its own, a request is reported no progress at all.
    const untokened = await post(session, { id: 4, method: 'tools/call', params: { name: 'alpha__report', arguments: { other: 'theirs' } } });
    expect(untokened.filter((message) => message.method === 'notifications/progress')).toEqual([]);
    expect(untokened.at(-1)).toMatchObject({ id: 4, result: { content: [{ type: 'text', text: 'reported' }] } });
  });

  it('sends logging/setLevel to an upstream that forgot the session in a new session', async () => {
    const session = await rawMcpSession(platform, gateway);
    await alpha.forgetSessions();
    const from = alpha.messages.length;
    expect(await post(session, { id: 5, method: 'logging/setLevel', params: { level: 'error' } })).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }]);
    // Refused (404) in the forgotten session, then sent again in the one opened for it.
    expect(methodsSentTo(alpha, from).filter((method) => method === 'logging/setLevel' || method === 'initialize')).toEqual(['logging/setLevel', 'initialize', 'logging/setLevel']);
  });
});
