import { EventEmitter, once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { createServer, request, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { createMemoryCache } from '@platform/runtime';
import { expectEventually, memoryLogger } from '@platform/test';
import { Agent } from 'undici';
import type { DataPlane } from '../../src/mcp/data-plane';
import type { McpSession } from '../../src/mcp/session';
import { handleGet } from '../../src/mcp/stream';
import type { McpPrincipal } from '../../src/oauth/resource-server';

/**
 * The client's GET stream (stream.ts) over its whole life, against a real SDK upstream: what starts when the client
 * comes, what stops when it leaves (also while its request is still being checked), and how an upstream's refusal of
 * a second stream ends the relay. The data plane around `handleGet` is a stand-in whose awaits the test controls;
 * the end-to-end behaviour through the edge is in get-stream.test.ts.
 */

const PROTOCOL = '2025-06-18';

interface UpstreamGet {
  sessionId: string;
  response: ServerResponse;
  open: boolean;
}

/** An SDK upstream (one McpServer per session) that keeps every GET it receives and whether it is still open. */
async function startCountingUpstream(): Promise<{ url: string; gets: UpstreamGet[]; events: EventEmitter; getsOf(sessionId: string): UpstreamGet[]; close(): Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const gets: UpstreamGet[] = [];
  const events = new EventEmitter();
  const http: Server = createServer((req, res) => {
    void (async () => {
      const sessionId = req.headers['mcp-session-id'];
      if (req.method === 'GET' && typeof sessionId === 'string') {
        const get: UpstreamGet = { sessionId, response: res, open: true };
        gets.push(get);
        res.on('close', () => {
          get.open = false;
          events.emit('get-closed', get);
        });
        events.emit('get', get);
      }
      const body = req.method === 'POST' ? await bodyOf(req) : undefined;
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (!transport) {
        const server = new McpServer({ name: 'counting-upstream', version: '1.0.0' });
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => void transports.set(id, transport!),
        });
        await server.connect(transport);
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    gets,
    events,
    getsOf: (sessionId) => gets.filter((get) => get.sessionId === sessionId),
    async close() {
      await Promise.allSettled([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** Opens a session with the upstream as the gateway does at the client's initialize; returns its id. */
async function openUpstreamSession(url: string): Promise<string> {
  const post = (body: unknown, sessionId?: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL } : {}) },
      body: JSON.stringify(body),
    });
  const initialized = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'gateway', version: '1' } } });
  const sessionId = initialized.headers.get('mcp-session-id')!;
  await initialized.text();
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).text();
  return sessionId;
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * What handleGet uses of the data plane, for one gateway fronting one upstream: client sessions opened already (so no
 * key ring is needed), a liveness check the test may hold, the change listeners it can count, and a witness of a relay
 * to the upstream starting (every relay asks which upstream session to use first).
 */
function standInPlane(upstreamUrl: string) {
  const logger = memoryLogger('get-stream');
  const listeners = new Set<(gatewayIds: string[]) => void>();
  const relayStarted = deferred<void>();
  const gateway = { id: 'gw-1', slug: 'tools', name: 'Tools', teamId: 'team-1' };
  const server = { id: 'srv-1', slug: 'counting', name: 'Counting', teamId: 'team-1', prefix: 'counting', url: upstreamUrl, transport: 'streamable-http', timeoutSeconds: 5, headers: {}, sendIdentity: false, capturePayloads: false, capabilities: [] } as RuntimeServer;
  const principal = { personId: 'person-1', email: 'a@example.test', displayName: 'A', gateway } as unknown as McpPrincipal;
  const openedSessions = new Map<string, { id: string; key: string; session: McpSession }>();
  let isEnded: () => Promise<boolean> = () => Promise.resolve(false);
  const dispatcher = new Agent();
  const draining = new AbortController();
  // The stream follows the shared auth generation (it ends when access ends): an in-memory cache of its own.
  const cache = createMemoryCache({ keyPrefix: `get-stream-${randomUUID()}:` });
  const plane = {
    draining: draining.signal,
    drain: () => draining.abort(),
    deps: { logger: logger.logger, cache },
    settings: { sessionMaxAgeSeconds: 3600, maxMessageBytes: 1 << 20 },
    dispatcher,
    openedSessions,
    liveness: { isEnded: () => isEnded() },
    exposures: {
      get: () => Promise.resolve({ exposure: { runtime: { gateway, servers: [server] } }, teamSlug: 'team' }),
      onChange(listener: (gatewayIds: string[]) => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    overrides: {
      known() {
        relayStarted.resolve();
        return undefined;
      },
    },
    refreshSoon: () => undefined,
  } as unknown as DataPlane;
  return {
    plane,
    principal,
    logger,
    listeners,
    relayStarted: relayStarted.promise,
    holdSessionCheck(check: () => Promise<boolean>) {
      isEnded = check;
    },
    /** A client session id whose session uses the upstream session `upstreamSessionId`. */
    clientSession(upstreamSessionId: string): string {
      const id = `client-${randomUUID()}`;
      const session: McpSession = {
        gatewayId: gateway.id, personId: principal.personId, protocolVersion: PROTOCOL, clientName: 'c', clientVersion: '1', clientCapabilities: {},
        upstreams: { [server.id]: { sessionId: upstreamSessionId, protocolVersion: PROTOCOL } },
        createdAt: Math.floor(Date.now() / 1000),
      };
      openedSessions.set(id, { id, key: `key-${id}`, session });
      return id;
    },
    /** Destroyed rather than closed: a relay that leaked (the failure under test) would keep a close waiting. */
    close: async () => {
      await dispatcher.destroy();
      await cache.close();
    },
  };
}

describe('the client GET stream over its life', () => {
  let upstream: Awaited<ReturnType<typeof startCountingUpstream>>;
  let stand: ReturnType<typeof standInPlane>;
  let edge: Server;
  let edgeUrl: string;
  /** Each GET the stand-in edge served: its response and handleGet's promise. */
  const served = new EventEmitter();
  const clients: ClientRequest[] = [];
  let tokenCheck: () => Promise<void>;

  beforeAll(async () => {
    upstream = await startCountingUpstream();
    edge = createServer((req, res) => {
      // The edge's token check comes first: a test may hold the request there.
      const handled = tokenCheck()
        .then(() => handleGet(stand.plane, req, res, stand.principal, 0, async () => undefined))
        .catch((error: { status?: number }) => {
          if (!res.headersSent) res.writeHead(error.status ?? 500).end();
        });
      served.emit('get', { res, handled });
    });
    await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
    edgeUrl = `http://127.0.0.1:${(edge.address() as AddressInfo).port}/mcp/tools`;
  });

  // A data plane of its own for each test, so that what one test leaks cannot count in the next.
  beforeEach(() => {
    stand = standInPlane(upstream.url);
    tokenCheck = () => Promise.resolve();
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await stand.close();
  });

  afterAll(async () => {
    edge.closeAllConnections();
    await new Promise<void>((resolve) => edge.close(() => resolve()));
    await upstream.close();
  });

  /** A GET of the client session `sessionId` to the stand-in edge; the handler's side arrives with `served`. */
  async function clientGet(sessionId: string): Promise<{ client: ClientRequest; res: ServerResponse; handled: Promise<void> }> {
    const client = request(edgeUrl, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } });
    client.on('error', () => undefined);
    client.end();
    clients.push(client);
    const [handler] = (await once(served, 'get')) as [{ res: ServerResponse; handled: Promise<void> }];
    return { client, ...handler };
  }

  it('starts nothing for a client that leaves while its GET is being checked', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    const checking = deferred<void>();
    const verdict = deferred<boolean>();
    stand.holdSessionCheck(() => {
      checking.resolve();
      return verdict.promise;
    });
    const { client, res, handled } = await clientGet(stand.clientSession(upstreamSession));
    await checking.promise;
    // The client leaves while the gateway still checks its session: its connection is closed before the stream starts.
    const closed = once(res, 'close');
    client.destroy();
    await closed;
    verdict.resolve(false);

    // Either the handler gives up (nothing to serve), or it starts relaying for nobody, for ever.
    const outcome = await Promise.race([handled.then(() => 'returned'), stand.relayStarted.then(() => 'relaying')]);
    expect(outcome).toBe('returned');
    expect(stand.listeners.size).toBe(0);
    expect(upstream.getsOf(upstreamSession)).toHaveLength(0);
  });

  it('starts nothing for a client that left before its GET reached the stream handler (during the token check)', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    const checked = deferred<void>();
    tokenCheck = () => checked.promise;
    const { client, res, handled } = await clientGet(stand.clientSession(upstreamSession));
    const closed = once(res, 'close');
    client.destroy();
    await closed;
    checked.resolve();

    const outcome = await Promise.race([handled.then(() => 'returned'), stand.relayStarted.then(() => 'relaying')]);
    expect(outcome).toBe('returned');
    expect(stand.listeners.size).toBe(0);
  });

  it('relays while the client stays and stops everything it started when the client leaves', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    const reached = once(upstream.events, 'get');
    const { client, handled } = await clientGet(stand.clientSession(upstreamSession));
    await reached;
    expect(upstream.getsOf(upstreamSession).filter((get) => get.open)).toHaveLength(1);
    expect(stand.listeners.size).toBe(1);

    client.destroy();
    await handled;
    expect(stand.listeners.size).toBe(0);
    await expectEventually(() => expect(upstream.getsOf(upstreamSession).filter((get) => get.open)).toHaveLength(0));
  });

  it('ends an open stream cleanly when the edge begins draining, and stops everything it started', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    const reached = once(upstream.events, 'get');
    const { client, handled } = await clientGet(stand.clientSession(upstreamSession));
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    expect(response.statusCode).toBe(200);
    await reached;
    const ended = once(response.resume(), 'end');

    stand.plane.drain();
    // The response ends as a complete HTTP message (the client may open the stream again elsewhere), not a reset.
    await ended;
    await handled;
    expect(stand.listeners.size).toBe(0);
    await expectEventually(() => expect(upstream.getsOf(upstreamSession).filter((get) => get.open)).toHaveLength(0));
  });

  it('refuses a GET that arrives while the edge drains (503), starting nothing', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    stand.plane.drain();
    const { client, handled } = await clientGet(stand.clientSession(upstreamSession));
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    expect(response.statusCode).toBe(503);
    response.resume();
    await handled;
    expect(stand.listeners.size).toBe(0);
    expect(upstream.getsOf(upstreamSession)).toHaveLength(0);
  });

  it('stops asking an upstream that refuses a second GET stream for the session (409), and says so once', async () => {
    const upstreamSession = await openUpstreamSession(upstream.url);
    // Someone else (another replica's relay, say) holds the one GET stream the SDK upstream allows per session.
    const holder = new AbortController();
    const held = await fetch(upstream.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': upstreamSession, 'mcp-protocol-version': PROTOCOL }, signal: holder.signal });
    expect(held.status).toBe(200);
    try {
      const { client } = await clientGet(stand.clientSession(upstreamSession));
      const gaveUp = () => stand.logger.lines.filter((line) => line.serverId === 'srv-1' && /409/.test(String(line.msg)));
      await expectEventually(() => expect(gaveUp()).toHaveLength(1));
      // One refused attempt, no retry: the relay of this upstream ended when it logged.
      expect(upstream.getsOf(upstreamSession).map((get) => get.response.statusCode)).toEqual([200, 409]);
      client.destroy();
    } finally {
      holder.abort();
    }
  });
});
