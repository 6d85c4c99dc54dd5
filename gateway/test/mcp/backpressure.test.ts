import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { drainedOrClosed, gatewayFronting, rawMcpSession, startTestPlatform, watchListenerOverflow, type FrontedGateway, type TestPlatform } from '@platform/test';

/** Notifications the flooding tool sends before its answer (unless the call names `events`), each carrying this much text. */
const EVENTS = 4_000;
const EVENT_TEXT = 'x'.repeat(8 * 1024);

/** A GET stream the upstream answers with one event that never ends: how much of it was taken, and whether it was cut. */
interface EndlessGet {
  bytes: number;
  closed: boolean;
}

/** Writes `data: xxxx…` without ever ending the line (at most 64 MB), as fast as the reader takes it. */
async function endlessEvent(res: ServerResponse, gets: EndlessGet[]): Promise<void> {
  const get: EndlessGet = { bytes: 0, closed: false };
  gets.push(get);
  res.on('close', () => (get.closed = true));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('event: message\ndata: ');
  const chunk = 'x'.repeat(64 * 1024);
  while (!res.destroyed && get.bytes < 64 * 1024 * 1024) {
    const more = res.write(chunk);
    get.bytes += chunk.length;
    if (!more) await drainedOrClosed(res);
  }
}

/**
 * An MCP upstream (raw HTTP, JSON answers) whose one tool answers with an event stream of EVENTS log notifications,
 * then its result. It writes as a well-behaved server does, waiting for its socket to drain when a write says so, and
 * counts the events the gateway has taken: what the gateway does not read stays in the upstream.
 */
async function startFloodingUpstream(): Promise<{ url: string; written(): number; endlessGets: EndlessGet[]; close(): Promise<void> }> {
  let written = 0;
  const endlessGets: EndlessGet[] = [];
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') return void endlessEvent(res, endlessGets);
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string; params?: { arguments?: { events?: number } } };
      if (message.method === 'initialize') {
        return json(res, { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'flood', version: '1' } } }, { 'mcp-session-id': 'flood-session' });
      }
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'tools/list') {
        return json(res, { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'flood', description: 'Floods the client', inputSchema: { type: 'object' } }] } });
      }
      if (message.method !== 'tools/call') return json(res, { jsonrpc: '2.0', id: message.id, result: {} });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await flood(res, message.id, (n) => (written = n), message.params?.arguments?.events);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    written: () => written,
    endlessGets,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** One flood of `events` log notifications and then the call's result, written as a well-behaved server writes. */
async function flood(res: ServerResponse, id: unknown, counted: (written: number) => void, events = EVENTS): Promise<void> {
  for (let n = 0; n < events; n++) {
    const event = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${n} ${EVENT_TEXT}` } };
    const more = res.write(`event: message\ndata: ${JSON.stringify(event)}\n\n`);
    counted(n + 1);
    if (!more) await drainedOrClosed(res);
    if (res.destroyed) return;
  }
  res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
}

/**
 * The same flooding tool on MCP's legacy HTTP+SSE transport (raw HTTP): every answer and notification comes back on
 * the GET stream that named the message endpoint, shared by all the requests of that connection.
 */
async function startLegacyFloodingUpstream(): Promise<{ url: string; written(): number; close(): Promise<void> }> {
  let written = 0;
  const streams = new Map<string, ServerResponse>();
  const send = (stream: ServerResponse, message: unknown) => stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const session = String(streams.size + 1);
      streams.set(session, res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: endpoint\ndata: /messages?session=${session}\n\n`);
      return;
    }
    const stream = streams.get(url.searchParams.get('session') ?? '');
    if (req.method !== 'POST' || url.pathname !== '/messages' || !stream) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string };
      res.writeHead(202).end();
      if (message.id === undefined) return;
      if (message.method === 'initialize') {
        return void send(stream, { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2024-11-05', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'flood', version: '1' } } });
      }
      if (message.method === 'tools/list') {
        return void send(stream, { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'flood', description: 'Floods the client', inputSchema: { type: 'object' } }] } });
      }
      if (message.method !== 'tools/call') return void send(stream, { jsonrpc: '2.0', id: message.id, result: {} });
      void flood(stream, message.id, (n) => (written = n));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    written: () => written,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * Backpressure (docs/gateway.md, Relaying): a client that reads its answer stream slowly holds the upstream back;
 * the edge does not read what it cannot deliver, so its memory does not grow with what the upstream sends.
 */
describe('MCP data plane: a slow client holds its upstream back', () => {
  let platform: TestPlatform;
  let upstream: Awaited<ReturnType<typeof startFloodingUpstream>>;
  let legacy: Awaited<ReturnType<typeof startLegacyFloodingUpstream>>;
  let gateway: FrontedGateway;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8', MCP_PUBLISH_POLICY: 'self_publish', MCP_MAX_MESSAGE_BYTES: String(256 * 1024) } });
    [upstream, legacy] = await Promise.all([startFloodingUpstream(), startLegacyFloodingUpstream()]);
    gateway = await gatewayFronting(platform, 'flood', [
      { slug: 'flood', url: upstream.url, timeoutSeconds: 60 },
      { slug: 'legacy', url: legacy.url, transport: 'sse', timeoutSeconds: 60 },
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.allSettled([upstream?.close(), legacy?.close()]);
    await platform?.stop();
  });

  /** POSTs `body` over a raw socket that reads nothing yet (`socket.resume()` to read). */
  async function postUnread(session: string, body: string, protocolVersion = '2025-06-18'): Promise<Socket> {
    const url = new URL(platform.url(`/mcp/${gateway.gatewaySlug}`));
    const socket = connect(Number(url.port), url.hostname);
    sockets.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause(); // the client reads nothing yet
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${gateway.token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: ${protocolVersion}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    return socket;
  }

  /** Waits until the upstream can write no more: the gateway has stopped taking its stream. */
  async function untilHeldBack(written: () => number): Promise<void> {
    let last = -1;
    for (let stable = 0; stable < 10; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const now = written();
      stable = now === last && now > 0 ? stable + 1 : 0;
      last = now;
    }
  }

  /** Reads the socket from now on until it has received `answers` results `done`; what it received. */
  async function readAnswers(socket: Socket, answers = 1): Promise<string> {
    const done = '"result":{"content":[{"type":"text","text":"done"}]}';
    socket.setEncoding('utf8');
    // Kept as chunks, joined once: searching one string that grows by each chunk (tens of MB in hundreds of chunks)
    // copies all of it every time. Each chunk is searched with the end of what came before it, shorter than `done`,
    // so an answer split between two chunks is found, and found once.
    const chunks: string[] = [];
    await new Promise<void>((resolve, reject) => {
      let found = 0;
      let tail = '';
      socket.on('data', (chunk: string) => {
        chunks.push(chunk);
        const searched = tail + chunk;
        for (let at = searched.indexOf(done); at !== -1; at = searched.indexOf(done, at + done.length)) found++;
        tail = searched.slice(-(done.length - 1));
        if (found >= answers) resolve();
      });
      socket.once('error', reject);
      socket.resume();
    });
    return chunks.join('');
  }

  /**
   * Calls `tool` over a raw socket that reads nothing, waits until the upstream can write no more, checks it was held
   * back far from the 32 MB it has to send, then reads: everything arrives, in order, then the answer.
   */
  async function expectHeldBackThenRelayed(tool: string, written: () => number): Promise<void> {
    const session = await rawMcpSession(platform, gateway);
    const socket = await postUnread(session, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }));
    await untilHeldBack(written);
    // Held back by what sockets and the relay buffer (a few MB on loopback), far from the 32 MB it has to send.
    expect(written()).toBeLessThan(EVENTS / 2);

    const received = await readAnswers(socket);
    expect(written()).toBe(EVENTS);
    const numbers = [...received.matchAll(/"data":"(\d+) x/g)].map((match) => Number(match[1]));
    expect(numbers).toEqual(Array.from({ length: EVENTS }, (_, n) => n));
  }

  it('stops taking the upstream\'s stream while the client does not read, and relays all of it once the client does', async () => {
    await expectHeldBackThenRelayed('flood__flood', () => upstream.written());
  }, 120_000);

  it('stops taking a legacy SSE upstream\'s shared stream while the client does not read, and relays all of it once the client does', async () => {
    await expectHeldBackThenRelayed('legacy__flood', () => legacy.written());
  }, 120_000);

  it('holds back every request of a batch while the client does not read, with one wait on the shared stream, and relays all of it once the client does', async () => {
    // More requests than Node allows listeners on one emitter (10), each waiting for the client to take its events.
    const calls = 12;
    const events = 300;
    const session = await rawMcpSession(platform, gateway, '2025-03-26');
    const watch = watchListenerOverflow((req) => req.method === 'POST' && req.url === `/mcp/${gateway.gatewaySlug}`);
    try {
      const batch = Array.from({ length: calls }, (_, n) => ({ jsonrpc: '2.0', id: n + 1, method: 'tools/call', params: { name: 'flood__flood', arguments: { events } } }));
      const socket = await postUnread(session, JSON.stringify(batch), '2025-03-26');
      await untilHeldBack(() => upstream.written());
      const received = await readAnswers(socket, calls);
      expect(received.match(/"method":"notifications\/message"/g)?.length).toBe(calls * events);
      expect(watch.overflows).toEqual([]);
    } finally {
      watch.stop();
    }
  }, 120_000);

  it('cuts an upstream GET stream whose event outgrows MCP_MAX_MESSAGE_BYTES instead of buffering it', async () => {
    const session = await rawMcpSession(platform, gateway);
    // GETs before this one were discovery's (the SDK client opens one); the gateway's relay for this client's is next.
    const first = upstream.endlessGets.length;
    const relayed = () => upstream.endlessGets[first];
    const controller = new AbortController();
    const opened = fetch(platform.url(`/mcp/${gateway.gatewaySlug}`), {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      signal: controller.signal,
    });
    try {
      expect((await opened).status).toBe(200);
      // The gateway takes the event up to its limit (256 KiB here) plus what sockets hold, then drops the connection.
      for (let waited = 0; !relayed()?.closed; waited++) {
        if (waited > 300) throw new Error(`the upstream's GET was not cut: ${relayed()?.bytes ?? 0} bytes taken`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(relayed()!.bytes).toBeLessThan(16 * 1024 * 1024);
    } finally {
      controller.abort();
      await opened.then((response) => response.body?.cancel()).catch(() => undefined);
    }
  }, 60_000);
});
