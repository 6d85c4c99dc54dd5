import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * MCP upstreams over raw node:http, without the SDK: for what an SDK server never does (answers that never end,
 * oversized ids, notifications held unanswered). startMcpUpstream (mcp-upstream.ts) is the well-behaved one.
 */

/** A JSON-RPC message as a raw upstream receives it (undefined for a GET, which carries none). */
export type RawMessage = { id?: number; method: string } | undefined;

export interface RawUpstream {
  url: string;
  close(): Promise<void>;
}

/** An `initialize` result announcing `capabilities`, with what `serverInfo` adds. */
export const initializeResult = (capabilities: Record<string, unknown> = { tools: {} }, serverInfo: Record<string, unknown> = {}) => ({
  protocolVersion: '2025-06-18',
  capabilities,
  serverInfo: { name: 'raw', version: '1', ...serverInfo },
});

/** Answers a request with `result` as JSON, with `headers` added (an `mcp-session-id`, say). */
export function answer(res: ServerResponse, id: number | undefined, result: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

/** Writes `piece` now and every `everyMs` after, for as long as the connection stays open: an answer that never ends. */
export function trickle(res: ServerResponse, piece: string, everyMs = 500): void {
  res.write(piece);
  const timer = setInterval(() => res.write(piece), everyMs);
  res.on('close', () => clearInterval(timer));
}

/**
 * An MCP upstream over raw node:http, no SDK: `handle` answers each request as the test wants, including what an SDK
 * server never sends (answers that never end, oversized ones). `handle` returning false means: the default, 202 for
 * a notification, 405 otherwise. Listens on 127.0.0.1; `close` ends every connection.
 */
export async function startRawUpstream(handle: (message: RawMessage, res: ServerResponse, req: IncomingMessage) => boolean): Promise<RawUpstream> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as RawMessage) : undefined;
      if (handle(message, res, req)) return;
      if (message && message.id === undefined) return void res.writeHead(202).end();
      res.writeHead(405).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An upstream on MCP's legacy HTTP+SSE transport (protocol 2024-11-05) over raw node:http: a GET opens the stream,
 * whose first event names `/messages` as the message endpoint; each POSTed message is answered 202 and, when it is a
 * request, on the stream (`initialize`, `tools/list` with one tool, `ping`, and `pong` as every other result). `take`
 * sees every request first and may answer it itself, returning true (a redirect, a body that never ends); a POST it
 * answered with a 2xx still gets its message's answer on the stream. Listens on 127.0.0.1; `close` ends everything.
 */
export async function startRawLegacyUpstream(take: (message: RawMessage, res: ServerResponse, req: IncomingMessage) => boolean = () => false): Promise<RawUpstream> {
  const streams = new Set<ServerResponse>();
  const resultOf = (method: string): unknown => {
    if (method === 'initialize') return { ...initializeResult(), protocolVersion: '2024-11-05' };
    if (method === 'tools/list') return { tools: [{ name: 'ping', description: 'Answers pong', inputSchema: { type: 'object' } }] };
    if (method === 'ping') return {};
    return { content: [{ type: 'text', text: 'pong' }] };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as RawMessage) : undefined;
      const taken = take(message, res, req);
      if (req.method === 'GET') {
        if (taken) return;
        streams.add(res);
        res.on('close', () => streams.delete(res));
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('event: endpoint\ndata: /messages\n\n');
        return;
      }
      if (!taken) res.writeHead(202).end('Accepted');
      if (!message || message.id === undefined || res.statusCode >= 300) return;
      const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: resultOf(message.method) })}\n\n`;
      for (const stream of streams) stream.write(event);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
