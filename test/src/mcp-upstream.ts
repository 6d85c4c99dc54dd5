import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema, SubscribeRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * An upstream MCP server for tests and benchmarks, built with the official SDK's `McpServer` and its Streamable
 * HTTP transport, with sessions (one McpServer per session, as the SDK intends). Its tools exercise what a gateway
 * must relay: plain calls, progress, logging, elicitation, tool errors, slowness; a resource, a resource template
 * and a prompt; and definitions that change (rug pulls) with a list-changed notification.
 */
export interface McpUpstream {
  /** `http://127.0.0.1:{port}/mcp` */
  url: string;
  /** Headers of every request received, in order (lower-case names). */
  requests: { method: string; headers: Record<string, string | undefined> }[];
  /** Every JSON-RPC message (or batch) POSTed to it, in order, as parsed. */
  messages: unknown[];
  /**
   * Every GET (a session's stream of server-initiated messages) received, in order: its session id, the status it was
   * answered with (the SDK answers 409 to a second one of a session), and whether its connection is still open.
   */
  gets: { sessionId: string | undefined; status: number | undefined; open: boolean }[];
  /** Sessions opened and ended (DELETE) by clients. */
  sessionsOpened: number;
  /** Calls of `slow` that stopped because the client cancelled them. */
  cancelledCalls: number;
  sessionsEnded: number;
  /** Changes `echo`'s description in every session and notifies clients (the upstream "rug pull"). */
  redefineEcho(description: string): void;
  /** Forgets every session, as a restarted upstream would: clients get 404 and must initialize again. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

export interface McpUpstreamOptions {
  /** Distinguishes two upstreams: tool texts, resource URIs and the template scheme carry it. */
  name: string;
  /** Answer requests with JSON instead of SSE where the SDK allows it. */
  jsonResponses?: boolean;
  /**
   * Resumable streams (MCP 2025-11-25): an event store, so every stream opens with a priming event, a `detach` tool
   * that ends its answer stream half-way and finishes on the stream the client resumes, and a `hangup` tool whose
   * connection drops half-way with nothing to resume from.
   */
  resumable?: boolean;
  /** Registers more tools, resources or prompts on the server of every session, after the usual ones. */
  configure?: (server: McpServer) => void;
}

/**
 * The events of an upstream's streams in the order they were sent, for resuming (the SDK's example store orders the
 * events of one millisecond at random, so a replay could skip some).
 */
class OrderedEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = String(this.events.length + 1);
    this.events.push({ id, streamId, message });
    return id;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.events.findIndex((event) => event.id === lastEventId);
    if (last < 0) return '';
    const { streamId } = this.events[last]!;
    for (const event of this.events.slice(last + 1)) if (event.streamId === streamId) await send(event.id, event.message);
    return streamId;
  }
}

interface Session {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  echo: RegisteredTool;
}

/**
 * Waits `ms`, or less once `signal` aborts (the call cancelled, its session closed). The timer never holds the process
 * open either: a cancelled 20 s step once kept a jest worker alive after its tests, which jest then killed.
 */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

function buildServer(
  name: string,
  echoDescription: () => string,
  onCancelled: () => void,
  resumable: boolean,
  configure: (server: McpServer) => void = () => undefined,
): { server: McpServer; echo: RegisteredTool } {
  const server = new McpServer({ name: `upstream-${name}`, version: '1.0.0' }, { capabilities: { logging: {} } });
  const echo = server.registerTool(
    'echo',
    { title: 'Echo', description: echoDescription(), inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    ({ text }) => ({ content: [{ type: 'text', text: `${name}: ${text}` }] }),
  );
  server.registerTool('slow', { description: 'Waits, reporting progress', inputSchema: { steps: z.number().int().min(1).max(50), stepMs: z.number().int().min(0).max(60_000) } }, async ({ steps, stepMs }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      await sleepUnlessAborted(stepMs, extra.signal);
      if (extra.signal.aborted) {
        onCancelled();
        throw new Error('cancelled');
      }
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: steps } });
    }
    return { content: [{ type: 'text', text: `${name}: done after ${steps} steps` }] };
  });
  server.registerTool('log', { description: 'Logs a message to the client', inputSchema: { message: z.string() } }, async ({ message }, extra) => {
    // Once on the request's own stream (dropped by an upstream answering in JSON), once on the session's GET stream.
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: name, data: message } });
    await server.sendLoggingMessage({ level: 'info', logger: name, data: `${message} (standalone)` }, extra.sessionId);
    return { content: [{ type: 'text', text: 'logged' }] };
  });
  server.registerTool(
    'ask',
    // With `progressToken`, the question asks the client for progress under that token.
    { description: 'Asks the user a question (elicitation)', inputSchema: { question: z.string(), standalone: z.boolean().optional(), progressToken: z.string().optional() } },
    async ({ question, standalone, progressToken }, extra) => {
    const params = {
      message: question,
      requestedSchema: { type: 'object' as const, properties: { answer: { type: 'string' as const } }, required: ['answer'] },
      ...(progressToken !== undefined ? { _meta: { progressToken } } : {}),
    };
    // On the call's own stream (related to the request), or on the session's GET stream (standalone).
    const answer = standalone
      ? await server.server.elicitInput(params)
      : await extra.sendRequest({ method: 'elicitation/create', params: { mode: 'form', ...params } }, ElicitResultSchema);
    const content = answer.action === 'accept' ? `${name}: the user said ${String(answer.content?.answer)}` : `${name}: the user chose ${answer.action}`;
    return { content: [{ type: 'text', text: content }] };
    },
  );
  server.registerTool('sample', { description: 'Asks the client\'s model (sampling)', inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
    const answer = await extra.sendRequest(
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 } },
      CreateMessageResultSchema,
    );
    const text = answer.content.type === 'text' ? answer.content.text : `(${answer.content.type})`;
    return { content: [{ type: 'text', text: `${name}: ${answer.model} said ${text}` }] };
  });
  server.registerTool('clientinfo', { description: 'Returns the clientInfo its client gave at initialize, as JSON' }, () => ({
    content: [{ type: 'text', text: JSON.stringify(server.server.getClientVersion() ?? null) }],
  }));
  server.registerTool('fail', { description: 'Always fails' }, () => ({ isError: true, content: [{ type: 'text', text: `${name}: failed on purpose` }] }));
  server.registerTool('whoami', { description: 'Returns the Authorization header the upstream received' }, (extra) => ({
    content: [{ type: 'text', text: String(extra.requestInfo?.headers.authorization ?? '') }],
  }));
  server.registerTool('roots', { description: 'Lists the client\'s roots' }, async (extra) => {
    const answer = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
    return { content: [{ type: 'text', text: answer.roots.map((root) => root.uri).join(',') }] };
  });
  if (resumable) {
    server.registerTool('detach', { description: 'Ends its answer stream half-way and finishes on the resumed one' }, async (extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
      extra.closeSSEStream?.();
      // What follows is stored and replayed to the client that resumes with Last-Event-ID, whenever it comes.
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 2, total: 2 } });
      return { content: [{ type: 'text', text: `${name}: finished after resuming` }] };
    });
    // Registered so that discovery lists it; the HTTP layer below starts its answer stream and drops the connection.
    server.registerTool('hangup', { description: 'Drops the connection in the middle of its answer' }, () => ({ content: [] }));
  }
  // Registered so that discovery lists it; the HTTP layer below answers its calls with malformed JSON.
  server.registerTool('garbage', { description: 'Answers with a malformed message' }, () => ({ content: [] }));
  // Subscriptions: acknowledged, then an update on the session's GET stream.
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    setTimeout(() => void server.server.sendResourceUpdated({ uri: request.params.uri }).catch(() => undefined), 20);
    return {};
  });
  server.registerResource('readme', `file:///${name}/readme.md`, { title: `${name} readme`, mimeType: 'text/markdown' }, (uri) => ({
    contents: [{ uri: uri.href, text: `# ${name} readme` }],
  }));
  server.registerResource(
    'item',
    new ResourceTemplate(`${name}://items/{id}`, { list: undefined, complete: { id: (value) => ['1', '2', '10'].filter((id) => id.startsWith(value)) } }),
    { description: `An item of ${name}` },
    (uri, { id }) => ({ contents: [{ uri: uri.href, text: `${name} item ${String(id)}` }] }),
  );
  server.registerPrompt('greet', { description: 'Greets someone', argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `${name} greets ${who}` } }],
  }));
  configure(server);
  return { server, echo };
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

export async function startMcpUpstream(options: McpUpstreamOptions): Promise<McpUpstream> {
  const sessions = new Map<string, Session>();
  let echoDescription = `Echoes text back (${options.name})`;
  const upstream: Omit<McpUpstream, 'url' | 'close'> = {
    requests: [],
    messages: [],
    gets: [],
    sessionsOpened: 0,
    sessionsEnded: 0,
    cancelledCalls: 0,
    redefineEcho(description) {
      echoDescription = description;
      // `update` notifies each session's client with tools/list_changed.
      for (const session of sessions.values()) session.echo.update({ description });
    },
    async forgetSessions() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map((session) => session.transport.close()));
    },
  };

  const http: Server = createServer((request, response) => {
    void (async () => {
      upstream.requests.push({ method: request.method ?? '', headers: { ...request.headers } as Record<string, string | undefined> });
      const sessionId = request.headers['mcp-session-id'];
      if (request.method === 'GET') {
        const get = {
          sessionId: typeof sessionId === 'string' ? sessionId : undefined,
          get status() {
            return response.headersSent ? response.statusCode : undefined;
          },
          open: true,
        };
        upstream.gets.push(get);
        response.once('close', () => (get.open = false));
      }
      const body = request.method === 'POST' ? await bodyOf(request) : undefined;
      if (body !== undefined) upstream.messages.push(body);
      const call = body as { method?: string; params?: { name?: string } } | undefined;
      if (call?.method === 'tools/call' && call.params?.name === 'garbage') {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": "2.0", "result": {oops');
        return;
      }
      if (call?.method === 'tools/call' && call.params?.name === 'hangup') {
        // One event without an id (nothing to resume from), then the connection goes.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'going' } })}\n\n`, () => response.destroy());
        return;
      }
      if (typeof sessionId === 'string') {
        const session = sessions.get(sessionId);
        if (!session) {
          response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        await session.transport.handleRequest(request, response, body);
        return;
      }
      if (request.method !== 'POST') {
        response.writeHead(400).end();
        return;
      }
      const { server, echo } = buildServer(options.name, () => echoDescription, () => upstream.cancelledCalls++, options.resumable ?? false, options.configure);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.jsonResponses ?? false,
        ...(options.resumable ? { eventStore: new OrderedEventStore(), retryInterval: 10 } : {}),
        onsessioninitialized: (id) => {
          upstream.sessionsOpened++;
          sessions.set(id, { server, transport, echo });
        },
        onsessionclosed: (id) => {
          upstream.sessionsEnded++;
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return Object.assign(upstream, {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await upstream.forgetSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  });
}

/** An upstream speaking the legacy HTTP+SSE transport (MCP 2024-11-05), for gateways that must still relay to one. */
export interface LegacySseUpstream {
  /** `http://127.0.0.1:{port}/sse`: the GET stream; it names `/messages?sessionId=…` for the client's POSTs. */
  url: string;
  /** Streams open now (one per client connection). */
  openStreams(): number;
  /** Ends every stream, as a restarted server would. */
  dropStreams(): Promise<void>;
  close(): Promise<void>;
}

/** The same tools, resources and prompts as startMcpUpstream, over the SDK's (deprecated) SSEServerTransport. */
export async function startLegacySseUpstream(options: { name: string }): Promise<LegacySseUpstream> {
  const transports = new Map<string, SSEServerTransport>();
  const http: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://upstream');
      if (request.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', response);
        transports.set(transport.sessionId, transport);
        response.on('close', () => transports.delete(transport.sessionId));
        const { server } = buildServer(options.name, () => `Echoes text back (${options.name})`, () => undefined, false);
        await server.connect(transport);
        return;
      }
      if (request.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          response.writeHead(404).end('unknown session');
          return;
        }
        await transport.handlePostMessage(request, response, await bodyOf(request));
        return;
      }
      response.writeHead(404).end();
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const dropStreams = async () => {
    const all = [...transports.values()];
    transports.clear();
    await Promise.allSettled(all.map((transport) => transport.close()));
  };
  return {
    url: `http://127.0.0.1:${port}/sse`,
    openStreams: () => transports.size,
    dropStreams,
    async close() {
      await dropStreams();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A stateless MCP server on 127.0.0.1 (a new SDK McpServer and transport per POST, JSON answers), for tests that only
 * need discovery: `build` makes the server from whatever the test holds now; `onRequest` sees each request first.
 */
export async function startStatelessMcpServer(
  build: () => McpServer,
  onRequest: (request: IncomingMessage) => void = () => undefined,
): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer((request, response) => {
    void (async () => {
      onRequest(request);
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const server = build();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, await bodyOf(request));
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
