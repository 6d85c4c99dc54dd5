import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import {
  answer,
  drainedOrClosed,
  expectEventually,
  gatewayFronting,
  initializeResult,
  postMcp,
  rawMcpSession,
  startRawLegacyUpstream,
  startRawUpstream,
  startTestPlatform,
  trickle,
  type FrontedGateway,
  type RawUpstream,
  type TestPlatform,
} from '@platform/test';

/** Messages of the flooding answer: each 2 MiB, half of the default MCP_MAX_MESSAGE_BYTES (4 MiB), 128 MiB in all. */
const LARGE_MESSAGES = 64;
const LARGE_TEXT = 'x'.repeat(2 * 1024 * 1024);
const MiB = 1024 * 1024;

/** An upstream body nobody reads that never ends: whether its connection is still open. */
interface EndlessBody {
  closed: boolean;
}

/** Answers with `status` and a body that never ends, remembering whether its connection closed. */
function endlessBody(res: ServerResponse, status: number, bodies: EndlessBody[]): void {
  const body: EndlessBody = { closed: false };
  bodies.push(body);
  res.on('close', () => (body.closed = true));
  res.writeHead(status, { 'content-type': 'text/plain' });
  trickle(res, 'x', 200);
}

/**
 * What an upstream's answer may make the edge hold (docs/gateway.md, Limits and choices): a response header that never
 * ends or outgrows the parser's limit fails the call; an answer stream of large messages, for a client that reads
 * nothing, is held back after about one message's worth, not after 32 messages; and a body the gateway does not read
 * (a legacy message endpoint's answer, a GET answer that is no stream) is cut once its grace is over, so an upstream
 * that never ends one cannot hold one more of the edge's sockets with every call.
 */
describe('MCP data plane: what an upstream answer may make the edge hold', () => {
  let platform: TestPlatform;
  let upstream: RawUpstream;
  let legacy: RawUpstream;
  let gateway: FrontedGateway;
  /** MiB of the flooding answer written so far (the upstream writes only as fast as the gateway takes it). */
  let floodedBytes = 0;
  /** Off while the catalog discovers the servers. */
  let endlessGets = false;
  let endlessPosts = false;
  const getBodies: EndlessBody[] = [];
  const postBodies: EndlessBody[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => {
    upstream = await startRawUpstream((message, res, req) => {
      if (req.method === 'GET') {
        if (!endlessGets) return false;
        endlessBody(res, 200, getBodies);
        return true;
      }
      const tool = (message as { params?: { name?: string } } | undefined)?.params?.name;
      if (message?.method === 'initialize') answer(res, message.id, initializeResult({ tools: {}, logging: {} }), { 'mcp-session-id': 'bounds-session' });
      else if (message?.method === 'tools/list') answer(res, message.id, { tools: ['endless_header', 'huge_header', 'flood'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
      else if (tool === 'endless_header') {
        // A status line, then a header that never ends: one byte every 100 ms.
        res.socket!.write('HTTP/1.1 200 OK\r\nX-Endless: ');
        const timer = setInterval(() => res.socket?.write('x'), 100);
        res.socket!.once('close', () => clearInterval(timer));
      } else if (tool === 'huge_header') res.writeHead(200, { 'content-type': 'application/json', 'x-huge': 'x'.repeat(64 * 1024) }).end('{}');
      else if (tool === 'flood') void flood(res, message!.id);
      else return false;
      return true;
    });
    legacy = await startRawLegacyUpstream((message, res, req) => {
      if (!endlessPosts || req.method !== 'POST' || message?.method !== 'tools/call') return false;
      endlessBody(res, 202, postBodies);
      return true;
    });
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish' } });
    gateway = await gatewayFronting(platform, 'bounds', [
      // One upstream, two registrations: a short timeout where it is the subject, a long one where it must not interfere.
      { slug: 'raw', url: upstream.url, timeoutSeconds: 2 },
      { slug: 'patient', url: upstream.url, timeoutSeconds: 120 },
      { slug: 'legacy', url: legacy.url, transport: 'sse' },
    ]);
  }, 120_000);

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await platform?.stop();
    await Promise.allSettled([upstream?.close(), legacy?.close()]);
  });

  /** LARGE_MESSAGES log notifications of LARGE_TEXT, written as a well-behaved server does (waiting for its socket to drain). */
  async function flood(res: ServerResponse, id: number | undefined): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let n = 0; n < LARGE_MESSAGES && !res.destroyed; n++) {
      const event = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: LARGE_TEXT } })}\n\n`;
      const more = res.write(event);
      floodedBytes += event.length;
      if (!more) await drainedOrClosed(res);
    }
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } })}\n\n`);
  }

  const call = async (session: string, id: number, name: string) =>
    (await postMcp(platform, gateway, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }, session, '2025-06-18')).json();

  it('fails a call whose response header never ends (the server\'s timeout) or outgrows the parser\'s limit', async () => {
    const session = await rawMcpSession(platform, gateway);
    expect(await call(session, 1, 'raw__endless_header')).toMatchObject({ id: 1, error: { code: -32001, data: { errorClass: 'timeout' } } });
    expect(await call(session, 2, 'raw__huge_header')).toMatchObject({ id: 2, error: { code: -32010 } });
  }, 200_000);

  it('holds about one large message of an answer stream for a client that reads nothing, not 32 of them', async () => {
    const session = await rawMcpSession(platform, gateway);
    const url = new URL(platform.url(`/mcp/${gateway.gatewaySlug}`));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'patient__flood', arguments: {} } });
    const socket = connect(Number(url.port), url.hostname);
    sockets.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause(); // the client reads nothing
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${gateway.token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Until the upstream can write no more: two seconds without progress.
    let last = -1;
    for (let stable = 0; stable < 10; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      stable = floodedBytes === last && floodedBytes > 0 ? stable + 1 : 0;
      last = floodedBytes;
    }
    // What the sockets buffer on loopback (a few MB each way), the client's response buffer, one queued message and
    // the one being decoded: far from the 64 MiB of 32 queued messages, let alone the 128 MiB the upstream has.
    expect(floodedBytes / MiB).toBeLessThan(40);
    socket.destroy();
  }, 120_000);

  it('cuts a body it does not read once its grace is over: a legacy message endpoint\'s answer, a GET answer that is no stream', async () => {
    const session = await rawMcpSession(platform, gateway);
    endlessPosts = true;
    endlessGets = true;
    const stop = new AbortController();
    try {
      // Each call's POST is answered 202 with a body that never ends; its answer comes on the legacy stream.
      for (let id = 1; id <= 3; id++) expect(await call(session, id, 'legacy__ping')).toMatchObject({ id, result: { content: [{ text: 'pong' }] } });
      expect(postBodies).toHaveLength(3);
      await expectEventually(() => expect(postBodies.every((posted) => posted.closed)).toBe(true), 30_000);

      // The client's GET stream stays open while its relay asks the upstream again after each useless answer.
      const stream = await fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
        headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        signal: stop.signal,
      });
      expect(stream.status).toBe(200);
      await expectEventually(() => {
        expect(getBodies.length).toBeGreaterThanOrEqual(3);
        expect(getBodies.slice(0, 2).every((get) => get.closed)).toBe(true);
      }, 60_000);
    } finally {
      stop.abort();
      endlessPosts = false;
      endlessGets = false;
    }
  }, 120_000);
});
