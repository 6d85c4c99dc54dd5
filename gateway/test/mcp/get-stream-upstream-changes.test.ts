import {
  adminClient,
  describeWith,
  expectEventually,
  gatewayFronting,
  metricSum,
  postMcp,
  rawMcpSession,
  setGatewayServers,
  startEdgeReplica,
  startMcpUpstream,
  startTestPlatform,
  type ApiClient,
  type EdgeReplica,
  type FrontedGateway,
  type McpUpstream,
  type TestPlatform,
} from '@platform/test';

type Message = { method?: string; params?: Record<string, unknown> };

/** A client's GET stream read as it arrives: its messages so far, and how it finished. */
interface OpenStream {
  status: number;
  messages: Message[];
  finished: Promise<'ended' | 'broken'>;
  stop(): void;
}

/**
 * A client's open GET stream relays the upstreams the gateway resolved to when it opened (docs/gateway.md, The
 * client's GET stream). When the catalog takes a server out of the gateway, or changes how the gateway reaches it, the
 * stream ends cleanly and the client's next one relays only the current upstreams; a change of what is exposed alone
 * only tells the client its lists changed. Ending the session (DELETE, on any replica) ends its GET stream. Real
 * edge, catalog and identity services and SDK upstreams; what the gateway does to an upstream is seen on the upstream.
 */
describeWith('redis', 'MCP gateway: a GET stream when its upstreams change or its session ends', () => {
  let platform: TestPlatform;
  let replica: EdgeReplica;
  let admin: ApiClient;
  let alpha: McpUpstream;
  let beta: McpUpstream;
  /** Where alpha's server moves to when its URL changes (the same tools). */
  let alphaMoved: McpUpstream;
  const streams: OpenStream[] = [];

  beforeAll(async () => {
    [alpha, beta, alphaMoved] = await Promise.all([startMcpUpstream({ name: 'alpha' }), startMcpUpstream({ name: 'beta' }), startMcpUpstream({ name: 'alpha' })]);
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    replica = await startEdgeReplica(platform);
    admin = await adminClient(platform);
  }, 120_000);

  afterEach(() => {
    for (const stream of streams.splice(0)) stream.stop();
  });

  afterAll(async () => {
    await replica?.stop();
    await platform?.stop();
    await Promise.all([alpha?.close(), beta?.close(), alphaMoved?.close()]);
  });

  /** A new team's gateway fronting alpha then beta, and a session of it opened over plain HTTP. */
  async function sessionOfNewGateway(label: string): Promise<{ gateway: FrontedGateway; session: string }> {
    const gateway = await gatewayFronting(platform, label, [
      { slug: 'alpha', url: alpha.url },
      { slug: 'beta', url: beta.url },
    ]);
    return { gateway, session: await rawMcpSession(platform, gateway) };
  }

  async function openStream(gateway: FrontedGateway, session: string, base: (path: string) => string = platform.url): Promise<OpenStream> {
    const controller = new AbortController();
    const response = await fetch(base(`/mcp/${gateway.gatewaySlug}`), {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: controller.signal,
    });
    const messages: Message[] = [];
    const finished = (async (): Promise<'ended' | 'broken'> => {
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        for await (const chunk of response.body ?? []) {
          buffered += decoder.decode(chunk as Uint8Array, { stream: true });
          for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
            for (const line of buffered.slice(0, end).split('\n')) if (line.startsWith('data: ')) messages.push(JSON.parse(line.slice('data: '.length)) as Message);
            buffered = buffered.slice(end + 2);
          }
        }
        return 'ended';
      } catch {
        return 'broken';
      }
    })();
    const stream = { status: response.status, messages, finished, stop: () => controller.abort() };
    streams.push(stream);
    return stream;
  }

  /** Calls a tool in the session; the answer's text. */
  async function callTool(gateway: FrontedGateway, session: string, name: string, args: Record<string, unknown>): Promise<string> {
    const answer = await postMcp(platform, gateway, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, session, '2025-06-18');
    expect(answer.status).toBe(200);
    return answer.text();
  }

  /** The upstream session the gateway uses with `upstream` for the client session (a call of it shows it there). */
  async function upstreamSessionOf(gateway: FrontedGateway, session: string, upstream: McpUpstream, prefix: string): Promise<string> {
    const before = upstream.requests.length;
    expect(await callTool(gateway, session, `${prefix}__echo`, { text: 'x' })).toContain(': x');
    const posted = upstream.requests.slice(before).filter((seen) => seen.method === 'POST' && seen.headers['mcp-session-id']);
    expect(posted).toHaveLength(1);
    return posted[0]!.headers['mcp-session-id']!;
  }

  const openGets = (upstream: McpUpstream, upstreamSession?: string) => upstream.gets.filter((get) => get.open && (upstreamSession === undefined || get.sessionId === upstreamSession));
  const methodsOf = (stream: OpenStream) => stream.messages.map((message) => message.method);
  /** The gateway's own list-changed notice (it sends prompts' with tools' and resources'; these upstreams never do). */
  const listNotices = (stream: OpenStream) => methodsOf(stream).filter((method) => method === 'notifications/prompts/list_changed').length;

  /** A session with both upstream sessions known and its GET stream relaying both upstreams' streams. */
  async function relayingStream(label: string) {
    const { gateway, session } = await sessionOfNewGateway(label);
    const alphaSession = await upstreamSessionOf(gateway, session, alpha, 'alpha');
    const betaSession = await upstreamSessionOf(gateway, session, beta, 'beta');
    const stream = await openStream(gateway, session);
    expect(stream.status).toBe(200);
    await expectEventually(() => {
      expect(openGets(alpha, alphaSession)).toHaveLength(1);
      expect(openGets(beta, betaSession)).toHaveLength(1);
    });
    return { gateway, session, alphaSession, betaSession, stream };
  }

  /**
   * The client opens its stream again after the gateway ended it: it relays beta's stream (a new GET there), and
   * `gone` (alpha's old upstream) gets no GET at all from it. The GETs of one stream are sent together, so once beta's
   * has arrived, one to `gone` would have too; a few seconds more leave ample margin.
   */
  async function expectReopenedWithout(gateway: FrontedGateway, session: string, betaSession: string, gone: McpUpstream): Promise<OpenStream> {
    const goneGets = gone.gets.length;
    const betaGets = beta.gets.filter((get) => get.sessionId === betaSession).length;
    const again = await openStream(gateway, session);
    expect(again.status).toBe(200);
    await expectEventually(() => {
      expect(beta.gets.filter((get) => get.sessionId === betaSession)).toHaveLength(betaGets + 1);
      expect(openGets(beta, betaSession)).toHaveLength(1);
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(gone.gets.length).toBe(goneGets);
    expect(openGets(gone)).toHaveLength(0);
    return again;
  }

  it('ends the stream when a platform admin disables a relayed server (op 16); the next one relays only the others', async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('off');
    const [alphaId] = gateway.serverIds as [string];
    const current = await admin.get(`/v1/admin/mcp-servers/${alphaId}`);
    const disabled = await admin.patch(`/v1/admin/mcp-servers/${alphaId}`, { enabled: false }, { 'if-match': `"${current.body.data.revision}"` });
    expect(disabled.status).toBe(200);

    // Neither the token nor the session changed: the stream ends because its upstreams did, cleanly, after telling
    // the client its lists changed (alpha's tools are gone).
    expect(await stream.finished).toBe('ended');
    expect(methodsOf(stream)).toContain('notifications/tools/list_changed');
    await expectEventually(() => expect(openGets(alpha, alphaSession)).toHaveLength(0));
    await expectReopenedWithout(gateway, session, betaSession, alpha);
  }, 60_000);

  it('ends the stream when a relayed server is removed from the gateway; the next one relays only the others', async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('removed');
    const [, betaId] = gateway.serverIds as [string, string];
    await setGatewayServers(gateway.owner, gateway.teamSlug, gateway.gatewaySlug, [{ serverId: betaId }]);

    expect(await stream.finished).toBe('ended');
    expect(methodsOf(stream)).toContain('notifications/tools/list_changed');
    await expectEventually(() => expect(openGets(alpha, alphaSession)).toHaveLength(0));
    await expectReopenedWithout(gateway, session, betaSession, alpha);
  }, 60_000);

  it('ends the stream when a relayed server is deleted; the next one relays only the others', async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('server-deleted');
    const [alphaId] = gateway.serverIds as [string];
    // The delete names the gateways that named the server (read by the delete itself, as their rows go with it).
    expect((await gateway.owner.delete(`/v1/teams/${gateway.teamSlug}/mcp-servers/${alphaId}`)).status).toBe(204);

    expect(await stream.finished).toBe('ended');
    expect(methodsOf(stream)).toContain('notifications/tools/list_changed');
    await expectEventually(() => expect(openGets(alpha, alphaSession)).toHaveLength(0));
    await expectReopenedWithout(gateway, session, betaSession, alpha);
  }, 60_000);

  it("ends the stream when a relayed server's URL changes; the next one relays the new address, never the old", async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('moved');
    const [alphaId] = gateway.serverIds as [string];
    const path = `/v1/teams/${gateway.teamSlug}/mcp-servers/${alphaId}`;
    const current = await gateway.owner.get(path);
    const movedRequests = alphaMoved.requests.length;
    expect((await gateway.owner.patch(path, { url: alphaMoved.url }, { 'if-match': `"${current.body.data.revision}"` })).status).toBe(200);

    expect(await stream.finished).toBe('ended');
    await expectEventually(() => expect(openGets(alpha, alphaSession)).toHaveLength(0));
    // The relay opens a session at the new address and streams in it.
    const movedGets = alphaMoved.gets.length;
    await expectReopenedWithout(gateway, session, betaSession, alpha);
    await expectEventually(() => {
      expect(alphaMoved.gets.length).toBeGreaterThan(movedGets);
      expect(openGets(alphaMoved)).toHaveLength(1);
    });
    // Calls go there too, in that session: the session the old address issued is never sent to the new one.
    expect(await callTool(gateway, session, 'alpha__echo', { text: 'moved' })).toContain(': moved');
    const sent = alphaMoved.requests.slice(movedRequests);
    expect(sent.filter((seen) => seen.method === 'POST').length).toBeGreaterThan(0);
    expect(sent.map((seen) => seen.headers['mcp-session-id'])).not.toContain(alphaSession);
    expect(new Set(sent.map((seen) => seen.headers['mcp-session-id']).filter(Boolean)).size).toBe(1);
  }, 60_000);

  it('keeps the stream, and says the lists changed, when only what is exposed changes', async () => {
    const { gateway, session, betaSession, stream } = await relayingStream('kept');
    const [alphaId, betaId] = gateway.serverIds as [string, string];
    const getsBefore = [alpha.gets.length, beta.gets.length];
    /** The stream still relays alpha's stream: a standalone log message of alpha's reaches it. */
    const expectStillRelaying = async (tool: string, message: string) => {
      await expectEventually(async () => {
        await callTool(gateway, session, tool, { message });
        expect(stream.messages.some((seen) => seen.method === 'notifications/message' && seen.params?.data === `${message} (standalone)`)).toBe(true);
      });
    };

    // The names the gateway exposes (alpha's prefix): a change of the gateway announced for it alone.
    let notices = listNotices(stream);
    await setGatewayServers(gateway.owner, gateway.teamSlug, gateway.gatewaySlug, [{ serverId: alphaId, prefix: 'renamed' }, { serverId: betaId }]);
    // The notice is sent once the stream has checked its upstreams after the change, and found them unchanged.
    await expectEventually(() => expect(listNotices(stream)).toBeGreaterThan(notices));
    await expectStillRelaying('renamed__log', 'after the rename');

    // A change of a relayed server that does not touch how it is reached (payload capture): announced to every gateway.
    notices = listNotices(stream);
    const path = `/v1/teams/${gateway.teamSlug}/mcp-servers/${alphaId}`;
    const current = await gateway.owner.get(path);
    expect((await gateway.owner.patch(path, { capturePayloads: true }, { 'if-match': `"${current.body.data.revision}"` })).status).toBe(200);
    await expectEventually(() => expect(listNotices(stream)).toBeGreaterThan(notices));
    await expectStillRelaying('renamed__log', 'after the capture change');

    // The same stream all along: no upstream was asked for a stream again.
    expect([alpha.gets.length, beta.gets.length]).toEqual(getsBefore);
    expect(openGets(beta, betaSession)).toHaveLength(1);
    expect(await Promise.race([stream.finished, 'open'])).toBe('open');
  }, 60_000);

  it("shares one catalog lookup among the re-checks of a gateway's open streams on a replica", async () => {
    const { gateway } = await sessionOfNewGateway('herd');
    const sessions = await Promise.all(Array.from({ length: 6 }, () => rawMcpSession(platform, gateway)));
    // On the other replica (its own process, its own metrics): a stream listens for catalog changes once its answer began.
    const open = await Promise.all(sessions.map((session) => openStream(gateway, session, replica.url)));
    expect(open.map((stream) => stream.status)).toEqual(sessions.map(() => 200));
    const lookups = () => metricSum(replica.opsUrl('/metrics'), 'platform_grpc_client_duration_seconds_count', { method: 'ResolveGateway' });
    const before = await lookups();

    const [alphaId, betaId] = gateway.serverIds as [string, string];
    await setGatewayServers(gateway.owner, gateway.teamSlug, gateway.gatewaySlug, [{ serverId: alphaId, prefix: 'herd' }, { serverId: betaId }]);
    // Every stream has checked (its notice follows its check), and all of them asked the catalog once in all.
    await expectEventually(() => expect(open.map(listNotices)).toEqual(open.map(() => 1)));
    expect((await lookups()) - before).toBe(1);
  }, 60_000);

  it('ends the GET stream of a session the client ends (DELETE), and opens no upstream session for it again', async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('deleted');
    const opened = [alpha.sessionsOpened, beta.sessionsOpened];
    const gets = [alpha.gets.length, beta.gets.length];
    await endSessionAndItsStream(platform, gateway, session, stream, [alphaSession, betaSession]);
    // A relay left running would reconnect (after 1 s), hear 404 for the ended upstream session and open a new one.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect([alpha.sessionsOpened, beta.sessionsOpened]).toEqual(opened);
    expect([alpha.gets.length, beta.gets.length]).toEqual(gets);
    expect((await openStream(gateway, session)).status).toBe(404);
  }, 60_000);

  it('ends the GET stream of a session ended on another replica', async () => {
    const { gateway, session, alphaSession, betaSession, stream } = await relayingStream('deleted-elsewhere');
    await endSessionAndItsStream(replica, gateway, session, stream, [alphaSession, betaSession]);
  }, 60_000);

  /** DELETEs the session through `via`; its GET stream ends and both upstream GETs of it close. */
  async function endSessionAndItsStream(
    via: { url(path: string): string },
    gateway: { gatewaySlug: string; token: string },
    session: string,
    stream: { finished: Promise<unknown> },
    [alphaSession, betaSession]: [string, string],
  ): Promise<void> {
    const deleted = await fetch(via.url(`/mcp/${gateway.gatewaySlug}`), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gateway.token}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(deleted.status).toBe(200);
    expect(await stream.finished).toBe('ended');
    await expectEventually(() => {
      expect(openGets(alpha, alphaSession)).toHaveLength(0);
      expect(openGets(beta, betaSession)).toHaveLength(0);
    });
  }
});
