import type { Dispatcher } from 'undici';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { GatewayRpcError, isNotification, isRequest, isResponse, progressTokenOf, RPC, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from './jsonrpc';
import { isMessageEvent } from './sse-decoder';
import { ACCEPT_BOTH, dropBody, exchange, sseEvents, type UpstreamAnswer, type UpstreamEndpoint } from './upstream-client';
import { httpError, upstreamFailure } from './upstream-errors';
import { heldBytesOf, streamItemOf, type UpstreamStreamItem } from './upstream-items';
import type { ClientDescription } from './upstream-sessions';

/**
 * The client side of MCP's legacy HTTP+SSE transport (protocol 2024-11-05), for upstream servers registered with
 * `transport: "sse"`. The client holds a GET stream open; the server's first event (`endpoint`) names where to POST
 * messages; every answer, notification and server request comes back on that one stream. So, unlike Streamable
 * HTTP, a session is a live connection held by one replica: each replica opens its own for a client session that
 * uses it (docs/gateway.md, "Legacy SSE upstreams").
 */

export interface LegacyOptions {
  dispatcher: Dispatcher;
  maxMessageBytes: number;
  timeoutSeconds: number;
}

const GATEWAY_INITIALIZE_ID = 'gateway-initialize';
const idKey = (id: JsonRpcId | null) => JSON.stringify(id);

function protocolError(slug: string, what: string): GatewayRpcError {
  return new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${slug}' ${what}`, 'error', 'protocol_error');
}

/**
 * What a connection's inboxes hold that their readers have not taken yet. The connection's one stream carries every
 * exchange of its client session, so it cannot be paused for one of them; instead its reader stops taking the stream
 * while the backlog is at its limit (a slow client then holds back its own session's upstream, never the edge's
 * memory), and goes on when readers have taken enough or the connection closes.
 */
class Backlog {
  private bytes = 0;
  private waiting: (() => void) | undefined;

  constructor(private readonly limit: number) {}

  add(bytes: number): void {
    this.bytes += bytes;
  }

  take(bytes: number): void {
    this.bytes -= bytes;
    if (this.bytes < this.limit) this.release();
  }

  /** Undefined while there is room; otherwise resolves when there is (or on `release`). */
  room(): Promise<void> | undefined {
    if (this.bytes < this.limit) return undefined;
    return new Promise<void>((resolve) => (this.waiting = resolve));
  }

  release(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}

/** Stream items for one reader, read as an async iteration that ends after an answer, at `end`, or on abort. */
class Inbox {
  private readonly items: UpstreamStreamItem[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: unknown;

  constructor(private readonly backlog: Backlog) {}

  push(item: UpstreamStreamItem): void {
    this.items.push(item);
    this.backlog.add(heldBytesOf(item));
    this.wake?.();
  }

  /** Forgets what the reader did not take (it has stopped reading). */
  discard(): void {
    for (const item of this.items.splice(0)) this.backlog.take(heldBytesOf(item));
  }

  end(failure?: unknown): void {
    this.ended = true;
    this.failure = failure;
    this.wake?.();
  }

  async *messages(signal: AbortSignal): AsyncGenerator<UpstreamStreamItem> {
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        while (this.items.length > 0) {
          const item = this.items.shift()!;
          this.backlog.take(heldBytesOf(item));
          yield item;
          if ('message' in item && isResponse(item.message)) return;
        }
        if (this.ended) {
          if (this.failure) throw this.failure;
          return;
        }
        if (signal.aborted) throw signal.reason ?? new Error('aborted');
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** One request waiting for its answer on the connection's stream, and what arrives for it meanwhile. */
class Exchange extends Inbox {
  constructor(
    backlog: Backlog,
    readonly progressToken: unknown,
  ) {
    super(backlog);
  }
}

/** One live legacy session with an upstream: its GET stream and the URL its messages are POSTed to. */
export class LegacySseConnection {
  protocolVersion = '';
  lastUsedAt = Date.now();
  private postUrl = '';
  private closed = false;
  private readonly stop = new AbortController();
  private readonly exchanges = new Map<string, Exchange>();
  private readonly listeners = new Set<(item: UpstreamStreamItem) => void>();
  private readonly closeListeners = new Set<() => void>();
  private readonly backlog: Backlog;

  private constructor(
    private readonly server: RuntimeServer,
    private readonly options: LegacyOptions,
  ) {
    // Room for at least one message of the largest size, however the backlog stands when it arrives.
    this.backlog = new Backlog(options.maxMessageBytes);
  }

  /** Opens the stream, learns the message endpoint and performs the MCP handshake (initialize, initialized). */
  static async open(server: RuntimeServer, headers: Record<string, string>, client: ClientDescription, options: LegacyOptions): Promise<LegacySseConnection> {
    const connection = new LegacySseConnection(server, options);
    try {
      await connection.connect(headers);
      await connection.handshake(headers, client);
      return connection;
    } catch (error) {
      connection.close();
      throw upstreamFailure(server.slug, error, options.timeoutSeconds);
    }
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** True while a request waits for its answer or a client listens: the connection is in use. */
  get busy(): boolean {
    return this.exchanges.size > 0 || this.listeners.size > 0;
  }

  /** Sends one message: a request's answer (and what precedes it) comes back as a stream; anything else is accepted. */
  async send(message: JsonRpcMessage, headers: Record<string, string>, signal: AbortSignal): Promise<UpstreamAnswer> {
    this.lastUsedAt = Date.now();
    if (!isRequest(message)) {
      await this.post(message, headers, signal);
      return { kind: 'accepted' };
    }
    const key = idKey(message.id);
    const exchange = new Exchange(this.backlog, progressTokenOf(message));
    // Registered before posting: the answer may arrive on the stream before the POST's own response.
    this.exchanges.set(key, exchange);
    const forget = () => {
      if (this.exchanges.get(key) === exchange) this.exchanges.delete(key);
      exchange.discard();
    };
    try {
      if (this.closed) throw protocolError(this.server.slug, 'closed its stream');
      await this.post(message, headers, signal);
    } catch (error) {
      forget();
      throw error;
    }
    const items = exchange.messages(signal);
    return {
      kind: 'stream',
      sessionId: '',
      messages: (async function* () {
        try {
          yield* items;
        } finally {
          forget();
        }
      })(),
    };
  }

  /** Messages the upstream sends outside any exchange (the client's GET stream relays them), until it closes. */
  async *unsolicited(signal: AbortSignal): AsyncGenerator<UpstreamStreamItem> {
    const inbox = new Inbox(this.backlog);
    const listener = (item: UpstreamStreamItem) => inbox.push(item);
    const onEnd = () => inbox.end();
    this.listeners.add(listener);
    this.onClose(onEnd);
    try {
      yield* inbox.messages(signal);
    } finally {
      this.listeners.delete(listener);
      this.closeListeners.delete(onEnd);
      inbox.discard();
    }
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.add(listener);
  }

  close(failure: unknown = protocolError(this.server.slug, 'closed its stream')): void {
    if (this.closed) return;
    this.closed = true;
    this.stop.abort();
    this.backlog.release();
    for (const exchange of this.exchanges.values()) exchange.end(failure);
    this.exchanges.clear();
    for (const listener of this.closeListeners) listener();
    this.closeListeners.clear();
  }

  /** This connection's upstream at `url` as the shared HTTP exchange addresses it (no Streamable HTTP session). */
  private at(url: string, headers: Record<string, string>): UpstreamEndpoint {
    return { serverSlug: this.server.slug, url, headers, sessionId: '', protocolVersion: '' };
  }

  private async connect(headers: Record<string, string>): Promise<void> {
    const { timeoutSeconds, dispatcher, maxMessageBytes } = this.options;
    const { statusCode, headers: answered, body } = await exchange(this.at(this.server.url, headers), 'GET', 'text/event-stream', undefined, {
      dispatcher,
      signal: this.stop.signal,
      timeoutSeconds,
    });
    const type = String(answered['content-type'] ?? '').toLowerCase();
    if (statusCode !== 200 || !type.startsWith('text/event-stream')) {
      dropBody(body);
      throw statusCode === 200 ? protocolError(this.server.slug, 'answered the SSE request without an event stream') : httpError(this.server.slug, statusCode);
    }
    let announce: ((url: string) => void) | undefined;
    const endpoint = new Promise<string>((resolve) => (announce = resolve));
    void (async () => {
      try {
        for await (const event of sseEvents(body, maxMessageBytes, this.server.slug)) {
          if (event.event === 'endpoint') announce?.(event.data.trim());
          else if (isMessageEvent(event)) {
            this.receive(streamItemOf(event.data));
            const room = this.backlog.room();
            if (room) await room;
          }
        }
        this.close();
      } catch (error) {
        this.close(upstreamFailure(this.server.slug, error, timeoutSeconds));
      }
    })();

    let timer: NodeJS.Timeout | undefined;
    const announced = await Promise.race([
      endpoint,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(protocolError(this.server.slug, 'did not name its message endpoint in time')), this.options.timeoutSeconds * 1000);
      }),
      new Promise<never>((_resolve, reject) => this.onClose(() => reject(protocolError(this.server.slug, 'closed its stream before naming its message endpoint')))),
    ]).finally(() => clearTimeout(timer));
    // Messages go to the stream's own origin only: an upstream cannot point the gateway's POSTs (and the credential
    // they carry) at another host.
    const base = new URL(this.server.url);
    let target: URL;
    try {
      target = new URL(announced, base);
    } catch {
      throw protocolError(this.server.slug, 'named an invalid message endpoint');
    }
    if (target.origin !== base.origin) throw protocolError(this.server.slug, 'named a message endpoint on another origin');
    this.postUrl = target.href;
  }

  private async handshake(headers: Record<string, string>, client: ClientDescription): Promise<void> {
    const initialize: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: GATEWAY_INITIALIZE_ID,
      method: 'initialize',
      params: { protocolVersion: client.protocolVersion, capabilities: client.clientCapabilities, clientInfo: { name: client.clientName, version: client.clientVersion } },
    };
    const signal = AbortSignal.timeout(this.options.timeoutSeconds * 1000);
    const answer = await this.send(initialize, headers, signal);
    if (answer.kind !== 'stream') throw protocolError(this.server.slug, 'did not answer initialize');
    for await (const item of answer.messages) {
      if (!('message' in item) || !isResponse(item.message)) continue;
      if ('error' in item.message) throw new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${this.server.slug}' refused to initialize`, 'upstream_unavailable', 'upstream_error');
      const version = item.message.result.protocolVersion;
      this.protocolVersion = typeof version === 'string' ? version : client.protocolVersion;
      await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers, signal);
      return;
    }
    throw protocolError(this.server.slug, 'did not answer initialize');
  }

  private async post(message: JsonRpcMessage, headers: Record<string, string>, signal: AbortSignal): Promise<void> {
    const { statusCode, body } = await exchange(this.at(this.postUrl, headers), 'POST', ACCEPT_BOTH, JSON.stringify(message), {
      dispatcher: this.options.dispatcher,
      signal,
      timeoutSeconds: this.options.timeoutSeconds,
    });
    dropBody(body);
    if (statusCode === 404) {
      // The upstream forgot this connection's session: the next use opens a new one.
      this.close();
      throw new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${this.server.slug}' ended its session`, 'upstream_unavailable', 'unreachable');
    }
    if (statusCode < 200 || statusCode >= 300) throw httpError(this.server.slug, statusCode);
  }

  /**
   * Routes an item from the stream: an answer to its exchange; progress to the exchange that asked for it; other
   * notifications, the upstream's own requests and text that was not a message to the newest exchange in flight (the
   * protocol does not say which request they belong to), else messages to the client's GET stream.
   */
  private receive(item: UpstreamStreamItem): void {
    if ('message' in item && isResponse(item.message)) {
      this.exchanges.get(idKey(item.message.id))?.push(item);
      return;
    }
    let exchange: Exchange | undefined;
    const message = 'message' in item && isNotification(item.message) ? item.message : undefined;
    const token = message?.method === 'notifications/progress' ? message.params?.progressToken : undefined;
    if (token !== undefined) for (const candidate of this.exchanges.values()) if (candidate.progressToken === token) exchange = candidate;
    if (!exchange) for (const candidate of this.exchanges.values()) exchange = candidate;
    if (exchange) exchange.push(item);
    else if ('message' in item) for (const listener of this.listeners) listener(item);
  }
}

/**
 * This replica's legacy connections, one per client session and server, opened on first use (concurrent first uses
 * share one) and closed when the client ends its session, after `idleMs` unused, or beyond `maxConnections`
 * (the least recently used idle one first).
 */
export class LegacySseConnections {
  private readonly connections = new Map<string, Promise<LegacySseConnection>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: { idleMs: number; maxConnections: number } = { idleMs: 10 * 60_000, maxConnections: 2_000 }) {
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, limits.idleMs));
    this.sweeper.unref();
  }

  connectionFor(sessionKey: string, server: RuntimeServer, open: () => Promise<LegacySseConnection>): Promise<LegacySseConnection> {
    // Keyed by the server's address too: once it moves, the connection to the old one (whose message endpoint would
    // receive the current credential) serves the session no more, and is closed.
    const serverPrefix = `${sessionKey}:${server.id}:`;
    const key = serverPrefix + server.url;
    const existing = this.connections.get(key);
    if (existing) return existing.then((connection) => (connection.isOpen ? connection : this.connectionFor(sessionKey, server, open)));
    void this.closeWhere((other) => other.startsWith(serverPrefix));
    const opening = open().then(
      (connection) => {
        connection.onClose(() => {
          if (this.connections.get(key) === opening) this.connections.delete(key);
        });
        return connection;
      },
      (error: unknown) => {
        this.connections.delete(key);
        throw error;
      },
    );
    this.connections.set(key, opening);
    void this.trim();
    return opening;
  }

  /** Ends the connections of a client session (its DELETE). */
  async closeSession(sessionKey: string): Promise<void> {
    await this.closeWhere((key) => key.startsWith(`${sessionKey}:`));
  }

  private async closeWhere(matches: (key: string) => boolean): Promise<void> {
    const closing: Promise<LegacySseConnection>[] = [];
    for (const [key, pending] of this.connections) {
      if (!matches(key)) continue;
      this.connections.delete(key);
      closing.push(pending);
    }
    for (const pending of closing) (await pending.catch(() => undefined))?.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.connections.values()];
    this.connections.clear();
    for (const pending of all) (await pending.catch(() => undefined))?.close();
  }

  private async sweep(): Promise<void> {
    const idleSince = Date.now() - this.limits.idleMs;
    for (const [key, pending] of this.connections) {
      const connection = await pending.catch(() => undefined);
      if (connection && !connection.busy && connection.lastUsedAt < idleSince) {
        this.connections.delete(key);
        connection.close();
      }
    }
  }

  private async trim(): Promise<void> {
    if (this.connections.size <= this.limits.maxConnections) return;
    const settled = await Promise.all([...this.connections].map(async ([key, pending]) => ({ key, connection: await pending.catch(() => undefined) })));
    const idle = settled.filter((entry) => entry.connection && !entry.connection.busy).sort((a, b) => a.connection!.lastUsedAt - b.connection!.lastUsedAt);
    for (const { key, connection } of idle.slice(0, this.connections.size - this.limits.maxConnections)) {
      this.connections.delete(key);
      connection!.close();
    }
  }
}
