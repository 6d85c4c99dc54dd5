import { once } from 'node:events';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { connectionName } from '@platform/runtime';
import {
  databaseOf,
  describeWith,
  expectEventually,
  gatewayAccessToken,
  gatewayFronting,
  infraUrl,
  memoryLogger,
  metricSum,
  postMcp,
  readToEnd,
  startMcpUpstream,
  startRedisRelay,
  startTestPlatform,
  type FrontedGateway,
  type McpUpstream,
  type TcpProxy,
  type TestPlatform,
} from '@platform/test';
import { createClient } from 'redis';
import { sessionKeyOf } from '../../src/mcp/session';

/**
 * The client's GET stream (stream.ts) over its whole life, through the real edge, catalog and identity services and a
 * real SDK upstream: what starts when the client comes, what stops when it leaves (also while its request is still
 * being checked), how an upstream's refusal of a second stream ends the relay, and the edge's drain. Timing is
 * controlled only from outside: the session check is held by stalling the replies of the edge's Redis connection
 * (a relay in front of Redis), the token check by a PostgreSQL lock on the table the identity service reads, and the
 * drain is the platform's own stop.
 */
describeWith('redis', 'the client GET stream over its life', () => {
  let platform: TestPlatform;
  let upstream: McpUpstream;
  let relay: TcpProxy & { url: string };
  let gateway: FrontedGateway;
  let stopped = false;
  // The platform's own log, to see what it tells operators.
  const platformLog = memoryLogger('platform');
  const clients: ClientRequest[] = [];

  beforeAll(async () => {
    upstream = await startMcpUpstream({ name: 'alpha' });
    relay = await startRedisRelay(infraUrl('redis')!);
    platform = await startTestPlatform({
      env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', REDIS_URL: relay.url },
      logger: platformLog.logger,
    });
    gateway = await gatewayFronting(platform, 'life', [{ slug: 'alpha', url: upstream.url }]);
  }, 120_000);

  afterEach(() => {
    relay.thaw();
    for (const client of clients.splice(0)) client.destroy();
  });

  afterAll(async () => {
    relay?.thaw();
    if (!stopped) await platform?.stop();
    await relay?.close();
    await upstream?.close();
  });

  /** A session opened with initialize alone: no request of it has passed the session check on this edge yet. */
  async function initializedSession(): Promise<string> {
    const initialized = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'life', version: '1' } } });
    expect(initialized.status).toBe(200);
    await initialized.text();
    return initialized.headers.get('mcp-session-id')!;
  }

  /** The upstream session the gateway uses for `session` (the one a call of the session reaches the upstream in). */
  async function upstreamSessionOf(session: string): Promise<string> {
    const before = upstream.requests.length;
    const called = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'alpha__echo', arguments: { text: 'x' } } }, session, '2025-06-18');
    expect(called.status).toBe(200);
    expect(await called.text()).toContain('alpha: x');
    const posted = upstream.requests.slice(before).filter((seen) => seen.method === 'POST' && seen.headers['mcp-session-id']);
    expect(posted).toHaveLength(1);
    return posted[0]!.headers['mcp-session-id']!;
  }

  /** A GET of the client session `session`, over a connection of its own that the test may cut. */
  function clientGet(session: string, token = gateway.token): { client: ClientRequest; response: Promise<IncomingMessage> } {
    const client = request(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': session },
    });
    client.on('error', () => undefined);
    client.end();
    clients.push(client);
    const response = once(client, 'response').then(([answer]) => answer as IncomingMessage);
    response.catch(() => undefined); // a client the test cuts gets no response
    return { client, response };
  }

  /** How many GETs of /mcp/{slug} the edge saw end because the client went away first (status 499 in its metric). */
  function abandonedGets(): Promise<number> {
    return metricSum(platform.opsUrl('/metrics'), 'platform_http_request_duration_seconds_count', { method: 'GET', route: '/mcp/{slug}', status: '499' });
  }

  const openGetsOf = (upstreamSession: string) => upstream.gets.filter((get) => get.sessionId === upstreamSession && get.open);

  it('starts nothing for a client that leaves while its GET is being checked', async () => {
    const session = await initializedSession();
    // Every Redis command sent by Redis' MONITOR: the witness that the edge is checking the session (the check asks
    // the shared cache once for a session this edge has not seen), while its replies are held back.
    const monitor = createClient({ url: infraUrl('redis')! });
    await monitor.connect();
    const commands: string[] = [];
    await monitor.monitor((line) => commands.push(String(line)));
    try {
      const abandonedBefore = await abandonedGets();
      expect(relay.freeze(connectionName(platform.env.REDIS_KEY_PREFIX ?? '', 'commands'))).toBeGreaterThan(0);
      const { client } = clientGet(session);
      await expectEventually(() => expect(commands.some((line) => line.includes(`mcp:session-ended:${sessionKeyOf(session)}`))).toBe(true));
      // The client leaves while the gateway still checks its session; the edge sees its connection close first.
      client.destroy();
      await expectEventually(async () => expect(await abandonedGets()).toBeGreaterThan(abandonedBefore));
    } finally {
      relay.thaw();
      await monitor.close();
    }
    // A call of the same session reaches the upstream after the held check has gone on: by then a relay started for
    // nobody would have asked the upstream for its stream in the session's upstream session.
    const upstreamSession = await upstreamSessionOf(session);
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession)).toHaveLength(0);
  });

  it('starts nothing for a client that leaves while its access token is being checked', async () => {
    const session = await initializedSession();
    // A token of the same person this edge has never checked: its check asks the identity service over gRPC, which
    // reads identity.oauth_tokens (store/oauth-grants-store.ts, findValidAccessToken).
    const fresh = await gatewayAccessToken(platform, gateway.owner.cookieHeader(), gateway.gatewaySlug);
    const holder = await databaseOf(platform, { required: true });
    const observer = await databaseOf(platform, { required: true });
    const monitor = createClient({ url: infraUrl('redis')! });
    await monitor.connect();
    const commands: string[] = [];
    await monitor.monitor((line) => commands.push(String(line)));
    // The session check asks the shared cache once per session this edge has not seen: with the edge's Redis replies
    // held, each request of the session that reached it shows here, in the order the edge will get the answers.
    const sessionChecks = () => commands.filter((line) => line.includes(`mcp:session-ended:${sessionKeyOf(session)}`)).length;
    let upstreamSession: string;
    try {
      const abandonedBefore = await abandonedGets();
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE identity.oauth_tokens IN ACCESS EXCLUSIVE MODE');
      const { client } = clientGet(session, fresh);
      // The identity service's query of the GET's token waits for the lock: the edge is checking the token.
      await expectEventually(async () => {
        const { rows } = await observer.query<{ waiting: number }>(
          "SELECT count(*)::int AS waiting FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND relation = 'identity.oauth_tokens'::regclass AND NOT granted",
        );
        expect(rows[0]!.waiting).toBeGreaterThan(0);
      });
      // The client leaves while the gateway still checks its token; the edge sees its connection close first.
      client.destroy();
      await expectEventually(async () => expect(await abandonedGets()).toBeGreaterThan(abandonedBefore));

      // The token check goes on; the GET is held again at its session check, where it is seen to have got to.
      expect(relay.freeze(connectionName(platform.env.REDIS_KEY_PREFIX ?? '', 'commands'))).toBeGreaterThan(0);
      await holder.query('COMMIT');
      await expectEventually(() => expect(sessionChecks()).toBe(1));
      // A call of the same session, whose session check waits behind the GET's on the same connection: once it has
      // reached the upstream, the GET has gone past its check, and a relay started for nobody would have asked the
      // upstream for its stream.
      const calling = upstreamSessionOf(session);
      await expectEventually(() => expect(sessionChecks()).toBe(2));
      relay.thaw();
      upstreamSession = await calling;
    } finally {
      relay.thaw();
      await holder.query('ROLLBACK').catch(() => undefined);
      await Promise.all([holder.end(), observer.end(), monitor.close()]);
    }
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession)).toHaveLength(0);
    // Nor was the session's stream claimed for nobody: a GET of it now is served, and it is the upstream's only one.
    const { response } = clientGet(session);
    expect((await response).statusCode).toBe(200);
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(1));
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession)).toHaveLength(1);
  });

  it('relays while the client stays and stops everything it started when the client leaves', async () => {
    const session = await initializedSession();
    const upstreamSession = await upstreamSessionOf(session);
    const { client, response } = clientGet(session);
    expect((await response).statusCode).toBe(200);
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(1));

    client.destroy();
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(0));
    // Nothing reopens it: the relay ended with the client, it did not just lose its stream.
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession)).toHaveLength(1);
  });

  it('stops asking an upstream that refuses a second GET stream for the session (409)', async () => {
    const session = await initializedSession();
    const upstreamSession = await upstreamSessionOf(session);
    // Someone else (another replica's relay, say) holds the one GET stream the SDK upstream allows per session.
    const holder = new AbortController();
    const held = await fetch(upstream.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': upstreamSession, 'mcp-protocol-version': '2025-06-18' }, signal: holder.signal });
    expect(held.status).toBe(200);
    try {
      const { response } = clientGet(session);
      expect((await response).statusCode).toBe(200);
      await expectEventually(() => expect(upstream.gets.filter((get) => get.sessionId === upstreamSession).map((get) => get.status)).toEqual([200, 409]));
    } finally {
      holder.abort();
    }
    // The stream is free again; a relay still asking would get it at its next try (after 1 s, then 2 s): it must not.
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(0));
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession).map((get) => get.status)).toEqual([200, 409]);
    // Said once, as a warning naming the server (an operator's clue that server-initiated messages go elsewhere).
    const refusals = platformLog.lines.filter((line) => String(line.msg).startsWith('an upstream refused a GET stream for the session (409'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ level: 'warn', serverId: expect.any(String) });
  });

  // Last: the edge's drain is the platform's stop.
  it('ends an open stream cleanly when the edge begins draining, stops everything it started, and refuses a GET that arrives meanwhile (503)', async () => {
    const session = await initializedSession();
    const upstreamSession = await upstreamSessionOf(session);
    const stream = await fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session },
    });
    expect(stream.status).toBe(200);
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(1));
    const ended = readToEnd(stream);

    // The listener takes no new connection once it drains: a GET can then only come on a connection kept open, here
    // one whose call's answer stream has begun (a progress event) and goes on (`slow`, until the test cancels it).
    const kept = connect(Number(new URL(platform.url('/')).port), '127.0.0.1');
    let received = '';
    kept.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    kept.on('error', () => undefined);
    const keptClosed = once(kept, 'close');
    await once(kept, 'connect');
    const path = `/mcp/${gateway.gatewaySlug}`;
    const mcpHeaders = { authorization: `Bearer ${gateway.token}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    kept.write(rawRequest('POST', path, mcpHeaders, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'alpha__slow', arguments: { steps: 50, stepMs: 1_000 }, _meta: { progressToken: 'held' } } }));
    await expectEventually(() => expect(received).toContain('notifications/progress'));

    stopped = true;
    const stopping = platform.stop();
    // The response ends as a complete HTTP message (the client may open the stream again elsewhere), not a reset.
    expect(await ended).toBe('ended');
    await expectEventually(() => expect(openGetsOf(upstreamSession)).toHaveLength(0));

    // The edge drains: on the kept connection, a GET of the session, then the held call's cancellation (which ends
    // its answer stream, so the GET's answer follows it on the connection).
    kept.write(
      rawRequest('GET', path, { ...mcpHeaders, accept: 'text/event-stream' }) +
        rawRequest('POST', path, mcpHeaders, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'test' } }),
    );
    await keptClosed;
    await stopping;

    const refusedAt = received.indexOf('HTTP/1.1 ', 1);
    expect(refusedAt).toBeGreaterThan(0);
    // The held call's answer stream ended as a complete chunked message before the GET was answered.
    expect(received.slice(0, refusedAt)).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n0\r\n\r\n$/);
    const refused = received.slice(refusedAt);
    const headEnd = refused.indexOf('\r\n\r\n');
    const [statusLine, ...headerLines] = refused.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    expect(statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(headers['retry-after']).toBe('1');
    expect(headers.connection).toBe('close');
    const body = refused.slice(headEnd + 4, headEnd + 4 + Number(headers['content-length']));
    expect(JSON.parse(body)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: expect.stringContaining('shutting down') } });
    // Nothing was started for it: the session's only upstream stream is the one the drain ended.
    expect(upstream.gets.filter((get) => get.sessionId === upstreamSession)).toHaveLength(1);
  }, 60_000);
});

/** An HTTP/1.1 request as written on a raw connection (kept alive). */
function rawRequest(method: string, path: string, headers: Record<string, string>, body?: unknown): string {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  if (body !== undefined) lines.push('content-type: application/json', 'accept: application/json, text/event-stream', `content-length: ${Buffer.byteLength(payload)}`);
  return `${lines.join('\r\n')}\r\n\r\n${payload}`;
}
