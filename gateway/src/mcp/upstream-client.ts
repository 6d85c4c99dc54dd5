import { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request, type Dispatcher } from 'undici';
import { AddressNotAllowedError, injectTraceHeaders } from '@platform/runtime';
import { GatewayRpcError, RPC, type JsonRpcMessage } from './jsonrpc';
import type { LegacySseConnection } from './legacy-sse';

/**
 * The data plane's client side of MCP's Streamable HTTP transport, towards one upstream server: POST a message and
 * get back "accepted", one JSON message, or a stream of messages (SSE); open the GET stream; end a session. It speaks
 * HTTP directly (undici, keep-alive connections through the address guard) rather than through the SDK's client,
 * because the gateway relays messages it does not interpret and must add almost nothing to a call's latency.
 */

export interface UpstreamEndpoint {
  serverSlug: string;
  url: string;
  /** Static headers (the credential) and, with sendIdentity, the identity token. */
  headers: Record<string, string>;
  /** The upstream's session id ('' when it has none) and the protocol version negotiated with it. */
  sessionId: string;
  protocolVersion: string;
  /** For a server on the legacy HTTP+SSE transport: this replica's live connection to it (legacy-sse.ts). */
  legacy?: LegacySseConnection;
}

export type UpstreamAnswer =
  | { kind: 'accepted' }
  /** `text` is the body as received: relayed as it is when the message needs no change. */
  | { kind: 'json'; message: unknown; text: string; sessionId: string }
  | { kind: 'stream'; messages: AsyncIterable<UpstreamStreamItem>; sessionId: string }
  /** The upstream no longer knows the session (HTTP 404 with a session id): re-initialize and retry. */
  | { kind: 'session_expired' };

/**
 * One item of an SSE stream: a parsed message (with its text as received, when known, for relaying it unchanged), or
 * text that was not one (the caller decides what that means).
 */
export type UpstreamStreamItem = { message: JsonRpcMessage; text?: string } | { malformed: string };

export const ACCEPT_BOTH = 'application/json, text/event-stream';

function headersFor(endpoint: UpstreamEndpoint, accept: string, withBody: boolean): Record<string, string> {
  const headers: Record<string, string> = { ...endpoint.headers, accept, ...injectTraceHeaders() };
  if (withBody) headers['content-type'] = 'application/json';
  if (endpoint.sessionId) headers['mcp-session-id'] = endpoint.sessionId;
  if (endpoint.protocolVersion) headers['mcp-protocol-version'] = endpoint.protocolVersion;
  return headers;
}

/** Why talking to an upstream failed, as a JSON-RPC error for the client and a class for the call record. */
export function upstreamFailure(slug: string, error: unknown, timeoutSeconds: number): GatewayRpcError {
  if (error instanceof GatewayRpcError) return error;
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 6; current = (current as { cause?: unknown }).cause) chain.push(current);
  const codes = chain.map((e) => (e as { code?: unknown; name?: unknown }).code ?? (e as { name?: unknown }).name);
  if (chain.some((e) => e instanceof AddressNotAllowedError)) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' is at an address the gateway may not reach`, 'upstream_unavailable', 'address_not_allowed');
  }
  if (codes.some((c) => c === 'TimeoutError' || c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT' || c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ETIMEDOUT')) {
    return new GatewayRpcError(RPC.requestTimeout, `Upstream server '${slug}' did not answer within ${timeoutSeconds} s`, 'timeout', 'timeout');
  }
  if (codes.includes('ECONNREFUSED')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' refused the connection`, 'upstream_unavailable', 'connection_refused');
  }
  if (codes.some((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'ECONNRESET' || c === 'EHOSTUNREACH' || c === 'ENETUNREACH' || c === 'UND_ERR_SOCKET')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' is unreachable`, 'upstream_unavailable', 'unreachable');
  }
  if (codes.includes('AbortError')) {
    return new GatewayRpcError(RPC.upstreamUnavailable, 'The request was cancelled', 'cancelled', 'cancelled');
  }
  return new GatewayRpcError(RPC.upstreamUnavailable, `Upstream server '${slug}' failed`, 'upstream_unavailable', 'unreachable');
}

function protocolError(slug: string, what: string): GatewayRpcError {
  return new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${slug}' answered with ${what}`, 'error', 'protocol_error');
}

export function httpError(slug: string, status: number): GatewayRpcError {
  const signIn = status === 401 || status === 403;
  return new GatewayRpcError(
    RPC.upstreamUnavailable,
    signIn ? `Upstream server '${slug}' refused the gateway's credentials (HTTP ${status})` : `Upstream server '${slug}' answered HTTP ${status}`,
    'upstream_unavailable',
    signIn ? 'upstream_unauthorized' : 'http_error',
  );
}

function firstHeader(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/**
 * The events of an SSE body as they arrive. With `maxBytes`, an event still unfinished after that many bytes fails
 * the stream (a protocol error of `slug`).
 */
export async function* sseEvents(body: Readable, maxBytes = Infinity, slug = ''): AsyncGenerator<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  let pendingBytes = 0;
  const parser = createParser({
    onEvent(event) {
      pendingBytes = 0;
      ready.push(event);
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body) {
      pendingBytes += (chunk as Buffer).length;
      if (pendingBytes > maxBytes) throw protocolError(slug, `a message larger than ${maxBytes} bytes`);
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      while (ready.length > 0) yield ready.shift()!;
    }
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** Whether an SSE event carries a message (events named `message`, or unnamed). */
export const isMessageEvent = (event: EventSourceMessage): boolean => event.event === undefined || event.event === 'message';

/** A message event's data as a stream item: the parsed message with its text, or the text that was not JSON. */
export function streamItemOf(data: string): UpstreamStreamItem {
  try {
    return { message: JSON.parse(data) as JsonRpcMessage, text: data };
  } catch {
    return { malformed: data.slice(0, 200) };
  }
}

/** The messages of an SSE body as they arrive. */
async function* sseItems(body: Readable): AsyncGenerator<UpstreamStreamItem> {
  for await (const event of sseEvents(body)) if (isMessageEvent(event)) yield streamItemOf(event.data);
}

/** One HTTP exchange with the upstream up to its response headers; every failure as a GatewayRpcError. */
export async function exchange(
  endpoint: UpstreamEndpoint,
  method: 'POST' | 'GET',
  accept: string,
  body: string | undefined,
  options: { dispatcher: Dispatcher; signal: AbortSignal; timeoutSeconds: number },
): Promise<Dispatcher.ResponseData> {
  try {
    return await request(endpoint.url, {
      method,
      dispatcher: options.dispatcher,
      headers: headersFor(endpoint, accept, body !== undefined),
      ...(body !== undefined ? { body } : {}),
      signal: options.signal,
      headersTimeout: options.timeoutSeconds * 1000,
      bodyTimeout: 0,
    });
  } catch (error) {
    throw upstreamFailure(endpoint.serverSlug, error, options.timeoutSeconds);
  }
}

export interface PostOptions {
  dispatcher: Dispatcher;
  /** Aborts the exchange (timeouts, client went away, cancellation). */
  signal: AbortSignal;
  maxMessageBytes: number;
  timeoutSeconds: number;
}

/** POSTs one JSON-RPC message to the upstream. Throws GatewayRpcError for every failure. */
export async function postToUpstream(endpoint: UpstreamEndpoint, message: JsonRpcMessage, options: PostOptions): Promise<UpstreamAnswer> {
  if (endpoint.legacy) return endpoint.legacy.send(message, endpoint.headers, options.signal);
  const answer = await new Promise<PostAnswer>((resolve, reject) => {
    const url = new URL(endpoint.url);
    const handler = new PostHandler(endpoint.serverSlug, options, resolve, reject);
    if (options.signal.aborted) return reject(upstreamFailure(endpoint.serverSlug, options.signal.reason, options.timeoutSeconds));
    options.dispatcher.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        headers: headersFor(endpoint, ACCEPT_BOTH, true),
        body: JSON.stringify(message),
        headersTimeout: options.timeoutSeconds * 1000,
        bodyTimeout: 0,
      },
      handler,
    );
  });
  const { statusCode, headers } = answer;
  const sessionId = firstHeader(headers['mcp-session-id']);
  if (statusCode === 202) return { kind: 'accepted' };
  if (statusCode === 404 && endpoint.sessionId) return { kind: 'session_expired' };
  if (statusCode < 200 || statusCode >= 300) throw httpError(endpoint.serverSlug, statusCode);
  if (answer.stream) return { kind: 'stream', messages: sseItems(answer.stream), sessionId };
  if (answer.text !== undefined) {
    try {
      return { kind: 'json', message: JSON.parse(answer.text) as unknown, text: answer.text, sessionId };
    } catch {
      throw protocolError(endpoint.serverSlug, 'malformed JSON');
    }
  }
  // Some servers answer a notification or response with an empty 200 instead of 202.
  if (!('id' in message && 'method' in message)) return { kind: 'accepted' };
  throw protocolError(endpoint.serverSlug, `an unexpected content type (${answer.type || 'none'})`);
}

/** An upstream's answer to a POST: a JSON body read whole, an SSE body as a stream, or neither (read and dropped). */
interface PostAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  type: string;
  text?: string;
  stream?: Readable;
}

/**
 * One POST through undici's dispatcher API rather than `request()`: a JSON answer is gathered straight from the
 * socket's chunks (no body stream, no async iteration, no promise per chunk, the hot path's common case); only an
 * SSE answer becomes a stream, paused while its reader lags. Every failure reaches the caller as a GatewayRpcError.
 */
class PostHandler implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private answer?: PostAnswer;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private ended = false;
  private readonly onAbort = () => this.controller?.abort(this.options.signal.reason as Error);

  constructor(
    private readonly slug: string,
    private readonly options: PostOptions,
    private readonly resolve: (answer: PostAnswer) => void,
    private readonly reject: (error: GatewayRpcError) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.options.signal.addEventListener('abort', this.onAbort, { once: true });
    if (this.options.signal.aborted) this.onAbort();
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    const type = firstHeader(headers['content-type']).toLowerCase();
    const answer: PostAnswer = { statusCode, headers, type };
    this.answer = answer;
    if (statusCode >= 200 && statusCode < 300 && statusCode !== 202 && type.startsWith('text/event-stream')) {
      // The reader pulls: paused while it lags, resumed when it asks for more; a reader that stops aborts the exchange.
      answer.stream = new Readable({
        read: () => controller.resume(),
        destroy: (error, callback) => {
          this.done();
          if (!this.ended && !controller.aborted) controller.abort(error ?? new Error('the SSE reader stopped'));
          callback(error);
        },
      });
      this.settle(answer);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const answer = this.answer!;
    if (answer.stream) {
      if (!answer.stream.push(chunk)) controller.pause();
      return;
    }
    // Only a 2xx JSON body is read; any other body is drained and dropped.
    if (!isJsonAnswer(answer)) return;
    this.size += chunk.length;
    if (this.size > this.options.maxMessageBytes) {
      this.fail(protocolError(this.slug, `a message larger than ${this.options.maxMessageBytes} bytes`));
      controller.abort(new Error('the upstream message is too large'));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.ended = true;
    this.done();
    const answer = this.answer!;
    if (answer.stream) {
      answer.stream.push(null);
      return;
    }
    if (isJsonAnswer(answer)) answer.text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.settle(answer);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.done();
    const stream = this.answer?.stream;
    if (stream) {
      if (!stream.destroyed) stream.destroy(error);
      return;
    }
    this.fail(upstreamFailure(this.slug, error, this.options.timeoutSeconds));
  }

  private done(): void {
    this.options.signal.removeEventListener('abort', this.onAbort);
  }

  private settle(answer: PostAnswer): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(answer);
  }

  private fail(error: GatewayRpcError): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
  }
}

function isJsonAnswer(answer: PostAnswer): boolean {
  return answer.statusCode >= 200 && answer.statusCode < 300 && answer.statusCode !== 202 && answer.type.startsWith('application/json');
}

/**
 * Opens the upstream's GET stream (server-initiated messages). Null when the upstream offers none (405) or no longer
 * knows the session (404).
 */
export async function openUpstreamStream(
  endpoint: UpstreamEndpoint,
  options: { dispatcher: Dispatcher; signal: AbortSignal; timeoutSeconds: number },
): Promise<AsyncIterable<UpstreamStreamItem> | null> {
  if (endpoint.legacy) return endpoint.legacy.unsolicited(options.signal);
  const { statusCode, headers, body } = await exchange(endpoint, 'GET', 'text/event-stream', undefined, options);
  if (statusCode === 405 || statusCode === 404) {
    body.resume();
    return null;
  }
  if (statusCode !== 200 || !firstHeader(headers['content-type']).toLowerCase().startsWith('text/event-stream')) {
    body.resume();
    throw statusCode === 200 ? protocolError(endpoint.serverSlug, 'a GET stream that is not text/event-stream') : httpError(endpoint.serverSlug, statusCode);
  }
  return sseItems(body);
}

/** Ends the upstream session (DELETE); failures are ignored: the upstream forgets idle sessions by itself. */
export async function endUpstreamSession(endpoint: UpstreamEndpoint, options: { dispatcher: Dispatcher; timeoutSeconds: number }): Promise<void> {
  if (!endpoint.sessionId) return;
  try {
    const { body } = await request(endpoint.url, {
      method: 'DELETE',
      dispatcher: options.dispatcher,
      headers: headersFor(endpoint, ACCEPT_BOTH, false),
      signal: AbortSignal.timeout(options.timeoutSeconds * 1000),
    });
    body.resume();
  } catch {
    // The upstream is gone or slow: its session expires on its side.
  }
}
