import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * How the upstream behaves: a real MCP server (SDK McpServer), one that never answers, or one that refuses the
 * credentials with 401 (the body carries a would-be secret, which must never reach the platform's answers).
 */
export type UpstreamMode = 'serve' | 'hang' | 'unauthorized';

export const UPSTREAM_SECRET_TEXT = 'upstream-body-text-that-must-not-leak';

export interface ControllableUpstream {
  url: string;
  mode: UpstreamMode;
  /** Tools the MCP server lists; change it to see discovery pick the change up. */
  tools: string[];
  /** Tools listed instead to a caller whose `Authorization` header has this value (as an upstream's scopes decide). */
  toolsByCredential: Record<string, string[]>;
  /** The `Authorization` header of each `tools/list` request, in order ('' without one). */
  toolsListCredentials: string[];
  /** The `Authorization` header of each `ping` request, in order ('' without one). */
  pingCredentials: string[];
  /** JSON-RPC `ping` requests answered (the health check's second step). */
  pings: number;
  /** HTTP requests received, whatever the mode. */
  requests: number;
  /** The `Authorization` header of every HTTP request, in order, whatever the mode ('' without one). */
  requestCredentials: string[];
  /** `tools/list` requests received (one per discovery). */
  toolsLists: number;
  /** While true, `tools/list` requests wait until `openToolsList` (to catch overlapping discoveries). */
  holdToolsList: boolean;
  /** `tools/list` requests waiting now, and the most that ever waited at once. */
  pendingToolsList: number;
  maxPendingToolsList: number;
  openToolsList(): void;
  /** While true, `ping` requests (a health check's second step) wait until `openPings`. */
  holdPing: boolean;
  /** `ping` requests waiting now. */
  pendingPings: number;
  openPings(): void;
  /** Stops listening (connections are then refused on its port). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

function buildServer(tools: readonly string[]): McpServer {
  const server = new McpServer({ name: 'health-upstream', version: '1.0.0' });
  for (const name of tools) {
    server.registerTool(name, { description: `${name} tool`, inputSchema: { query: z.string() } }, () => ({ content: [{ type: 'text', text: 'ok' }] }));
  }
  return server;
}

/** An MCP upstream on 127.0.0.1 built with the SDK's McpServer (stateless), whose behaviour a test switches. */
export async function startControllableUpstream(tools: string[] = ['echo']): Promise<ControllableUpstream> {
  const sockets = new Set<Socket>();
  let port = 0;
  let http: Server | null = null;
  const held: (() => void)[] = [];
  const heldPings: (() => void)[] = [];

  const upstream: ControllableUpstream = {
    url: '',
    mode: 'serve',
    tools,
    toolsByCredential: {},
    toolsListCredentials: [],
    pingCredentials: [],
    pings: 0,
    requests: 0,
    requestCredentials: [],
    toolsLists: 0,
    holdToolsList: false,
    pendingToolsList: 0,
    maxPendingToolsList: 0,
    openToolsList() {
      upstream.holdToolsList = false;
      for (const release of held.splice(0)) release();
    },
    holdPing: false,
    pendingPings: 0,
    openPings() {
      upstream.holdPing = false;
      for (const release of heldPings.splice(0)) release();
    },
    stop: () => stopListening(),
    restart: () => listen(),
    close: () => stopListening(),
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    upstream.requests++;
    upstream.requestCredentials.push(String(request.headers.authorization ?? ''));
    if (upstream.mode === 'hang') return; // never answers; the socket is destroyed on stop
    if (upstream.mode === 'unauthorized') {
      response.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end(UPSTREAM_SECRET_TEXT);
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const body = await bodyOf(request);
    const method = (body as { method?: string } | undefined)?.method;
    const credential = String(request.headers.authorization ?? '');
    if (method === 'ping') {
      upstream.pings++;
      upstream.pingCredentials.push(credential);
    }
    if (method === 'ping' && upstream.holdPing) {
      upstream.pendingPings++;
      await new Promise<void>((resolve) => heldPings.push(resolve));
      upstream.pendingPings--;
    }
    if (method === 'tools/list') {
      upstream.toolsLists++;
      upstream.toolsListCredentials.push(credential);
    }
    if (method === 'tools/list' && upstream.holdToolsList) {
      upstream.pendingToolsList++;
      upstream.maxPendingToolsList = Math.max(upstream.maxPendingToolsList, upstream.pendingToolsList);
      await new Promise<void>((resolve) => held.push(resolve));
      upstream.pendingToolsList--;
    }
    const server = buildServer(upstream.toolsByCredential[credential] ?? upstream.tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  }

  async function listen(): Promise<void> {
    const server = createServer((request, response) => {
      handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    upstream.url = `http://127.0.0.1:${port}/mcp`;
    http = server;
  }

  async function stopListening(): Promise<void> {
    const server = http;
    http = null;
    if (!server) return;
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }

  await listen();
  return upstream;
}
