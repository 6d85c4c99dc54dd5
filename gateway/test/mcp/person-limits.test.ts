import type { ServerResponse } from 'node:http';
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
  type TestPlatform,
} from '@platform/test';

/** An upstream that answers notifications only when told to: each relayed notification holds its exchange until then. */
interface StallingUpstream {
  url: string;
  /** Notifications received and not yet answered. */
  held: ServerResponse[];
  release(): void;
  close(): Promise<void>;
}

async function startStallingUpstream(): Promise<StallingUpstream> {
  const held: ServerResponse[] = [];
  const upstream = await startRawUpstream((message, res) => {
    if (message?.method === 'initialize') answer(res, message.id, initializeResult(), { 'mcp-session-id': 'stalling-session' });
    else if (message?.method === 'tools/list') answer(res, message.id, { tools: [] });
    else if (message && message.id === undefined && message.method !== 'notifications/initialized') held.push(res);
    else if (message?.id !== undefined) answer(res, message.id, {});
    else return false;
    return true;
  });
  return {
    ...upstream,
    held,
    release: () => {
      for (const res of held.splice(0)) res.writeHead(202).end();
    },
  };
}

/**
 * What one person may hold on a replica (docs/gateway.md, Limits and choices): POSTs in flight, messages being relayed
 * upstream and GET streams are capped per person (429 with Retry-After beyond), released when they end, and one
 * person's use never counts against another's.
 */
describe('MCP data plane: caps per person', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let ada: FrontedGateway;
  let bob: FrontedGateway;
  let stalling: StallingUpstream;
  let cyd: FrontedGateway;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'caps' });
    stalling = await startStallingUpstream();
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_MAX_REQUESTS_PER_PERSON: '2', MCP_MAX_GET_STREAMS_PER_PERSON: '1' },
    });
    ada = await gatewayFronting(platform, 'ada', [{ slug: 'caps', url: upstream.url }]);
    bob = await gatewayFronting(platform, 'bob', [{ slug: 'caps', url: upstream.url }]);
    cyd = await gatewayFronting(platform, 'cyd', [{ slug: 'stalling', url: stalling.url }]);
  }, 120_000);

  afterAll(async () => {
    stalling?.release();
    await platform?.stop();
    await upstream?.close();
    await stalling?.close();
  });

  const slowCall = (gateway: FrontedGateway, session: string, id: number) =>
    postMcp(platform, gateway, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'caps__slow', arguments: { steps: 1, stepMs: 1_500 } } }, session, '2025-06-18');
  const ping = (gateway: FrontedGateway, session: string) => postMcp(platform, gateway, { jsonrpc: '2.0', id: 99, method: 'ping' }, session, '2025-06-18');

  it('refuses a POST beyond the person\'s requests in flight with 429, for that person only, until one ends', async () => {
    const [adaSession, bobSession] = await Promise.all([rawMcpSession(platform, ada), rawMcpSession(platform, bob)]);
    const inFlight = [slowCall(ada, adaSession, 1), slowCall(ada, adaSession, 2)];
    // Both have reached the upstream: the person holds two.
    await expectEventually(async () => {
      const refused = await ping(ada, adaSession);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringMatching(/at most 2 requests in flight per person/) } });
    });
    // Another person is not held back by Ada's requests.
    expect((await ping(bob, bobSession)).status).toBe(200);

    const answered = await Promise.all(inFlight);
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
    await Promise.all(answered.map((response) => response.text()));
    expect((await ping(ada, adaSession)).status).toBe(200);
  }, 30_000);

  it('never refuses what ends requests in flight: at the cap, a cancellation is taken and frees its place', async () => {
    const session = await rawMcpSession(platform, ada);
    const long = (id: number) =>
      postMcp(platform, ada, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'caps__slow', arguments: { steps: 1, stepMs: 20_000 } } }, session, '2025-06-18');
    const inFlight = [long(11), long(12)];
    await expectEventually(async () => expect((await ping(ada, session)).status).toBe(429));
    const cancelled = await postMcp(platform, ada, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 11, reason: 'changed my mind' } }, session, '2025-06-18');
    expect(cancelled.status).toBe(202);
    // The cancelled call ends (without an answer) and its place is free again, long before its 20 s.
    await expectEventually(async () => expect((await ping(ada, session)).status).toBe(200));
    await postMcp(platform, ada, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12 } }, session, '2025-06-18');
    await Promise.all((await Promise.all(inFlight)).map((response) => response.text().catch(() => '')));
  }, 30_000);

  it('counts each request of a batch: a batch holding more requests than the cap is refused whole, one within it served', async () => {
    const session = await rawMcpSession(platform, ada, '2025-03-26');
    const pings = (count: number) => Array.from({ length: count }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }));
    const refused = await postMcp(platform, ada, pings(3), session, '2025-03-26');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: -32000, message: expect.stringMatching(/at most 2 requests in flight per person/) } });

    const served = await postMcp(platform, ada, pings(2), session, '2025-03-26');
    expect(served.status).toBe(200);
    const answers = (await served.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { id: number });
    expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
  }, 30_000);

  it('counts the notifications it relays upstream until their upstream takes them: beyond the cap 429, never a cancellation of the client\'s own request', async () => {
    const session = await rawMcpSession(platform, cyd);
    const notify = () => postMcp(platform, cyd, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, session, '2025-06-18');
    // Each is taken (202) and then held by the stalling upstream, and still counts.
    expect((await notify()).status).toBe(202);
    expect((await notify()).status).toBe(202);
    await expectEventually(async () => expect(stalling.held).toHaveLength(2));

    const refused = await notify();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: -32000, message: expect.stringMatching(/at most 2 messages being relayed upstream per person/) } });
    // An answer to a relayed question counts the same way.
    const answer = await postMcp(platform, cyd, { jsonrpc: '2.0', id: 'not-a-relayed-id', result: {} }, session, '2025-06-18');
    expect(answer.status).toBe(429);
    // Cancelling its own request is what frees a client's places: never refused.
    const cancelled = await postMcp(platform, cyd, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, session, '2025-06-18');
    expect(cancelled.status).toBe(202);
    // Nor is progress under a token the gateway never handed out: it goes nowhere.
    const progress = await postMcp(platform, cyd, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'foreign', progress: 1 } }, session, '2025-06-18');
    expect(progress.status).toBe(202);
    expect(stalling.held).toHaveLength(2);

    stalling.release();
    await expectEventually(async () => expect((await notify()).status).toBe(202));
    stalling.release();
  }, 30_000);

  it('refuses a GET stream beyond the person\'s open streams with 429 and serves it once the first closes', async () => {
    const [first, second] = await Promise.all([rawMcpSession(platform, ada), rawMcpSession(platform, ada)]);
    const openStream = (session: string, signal?: AbortSignal) =>
      fetch(platform.url(`/mcp/${ada.gatewaySlug}`), {
        headers: { authorization: `Bearer ${ada.token}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        ...(signal ? { signal } : {}),
      });
    const holding = new AbortController();
    const held = await openStream(first, holding.signal);
    expect(held.status).toBe(200);

    const refused = await openStream(second);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: -32000, message: expect.stringMatching(/at most 1 open GET streams per person/) } });

    holding.abort();
    await held.body?.cancel().catch(() => undefined);
    await expectEventually(async () => {
      const controller = new AbortController();
      const reopened = await openStream(second, controller.signal);
      controller.abort();
      await reopened.body?.cancel().catch(() => undefined);
      expect(reopened.status).toBe(200);
    });
  }, 30_000);
});
