import type { Readable } from 'node:stream';
import type { EventSourceMessage } from 'eventsource-parser';
import { request, type Dispatcher } from 'undici';
import type { Span } from '@platform/runtime';
import type { JsonRpcMessage } from './jsonrpc';
import type { LegacySseConnection } from './legacy-sse';
import { isMessageEvent, SseDecoder } from './sse-decoder';
import { signalOf } from './stop-switch';
import { httpError, protocolError, upstreamFailure } from './upstream-errors';
import { streamItemOf, type UpstreamStream, type UpstreamStreamItem } from './upstream-items';
import { DRAIN_GRACE_MS, firstHeader, PostHandler, type PostAnswer, type PostLimits } from './upstream-post';
import { endUpstreamSpan, recordUpstreamStatus, startUpstreamSpan, upstreamTraceHeaders } from './upstream-span';

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
  | { kind: 'stream'; messages: UpstreamStream; sessionId: string }
  /** The upstream no longer knows the session (HTTP 404 with a session id): re-initialize and retry. */
  | { kind: 'session_expired' };

export const ACCEPT_BOTH = 'application/json, text/event-stream';

/** The request's headers; `span`, the exchange's CLIENT span when it has one, is the parent the upstream is told. */
function headersFor(endpoint: UpstreamEndpoint, accept: string, withBody: boolean, span: Span | undefined): Record<string, string> {
  const headers: Record<string, string> = { ...endpoint.headers, accept, ...upstreamTraceHeaders(span) };
  if (withBody) headers['content-type'] = 'application/json';
  if (endpoint.sessionId) headers['mcp-session-id'] = endpoint.sessionId;
  if (endpoint.protocolVersion) headers['mcp-protocol-version'] = endpoint.protocolVersion;
  return headers;
}

/**
 * Drops a body the gateway does not read (an error's, a refused stream's, a legacy message endpoint's answer): drained,
 * so the keep-alive connection survives, and cut when it has not ended within DRAIN_GRACE_MS. An upstream writing it
 * forever would otherwise hold one of the edge's sockets for good, one more with every call or stream retry.
 */
export function dropBody(body: Readable): void {
  body.resume();
  if (body.readableEnded) return;
  const cut = setTimeout(() => body.destroy(), DRAIN_GRACE_MS).unref();
  body.once('close', () => clearTimeout(cut));
}

/**
 * The events of an SSE body as they arrive. With `maxBytes`, an event still unfinished after that many bytes fails
 * the stream (a protocol error of `slug`).
 */
export async function* sseEvents(body: Readable, maxBytes = Infinity, slug = '', onRetry?: (milliseconds: number) => void): AsyncGenerator<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  const decoder = new SseDecoder((event) => ready.push(event), maxBytes, onRetry);
  try {
    for await (const chunk of body) {
      if (!decoder.feed(chunk as Buffer)) throw protocolError(slug, `a message larger than ${maxBytes} bytes`);
      while (ready.length > 0) yield ready.shift()!;
    }
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/**
 * The messages of an SSE body as they arrive, with where the stream may be resumed. An event over `maxBytes` ends the
 * stream as a protocol error (an upstream writing one endless event would otherwise be buffered without bound). A body
 * that breaks fails as a GatewayRpcError, like every other failure of an exchange: undici's own error may hold what the
 * upstream sent (an HTTP parser error keeps the bytes it refused, which may echo the credential), and it would reach
 * the logs whole.
 */
function sseItems(body: Readable, maxBytes: number, slug: string, timeoutSeconds: number): UpstreamStream {
  const stream: { lastEventId?: string; retryMs?: number } & UpstreamStream = {
    async *[Symbol.asyncIterator]() {
      try {
        for await (const event of sseEvents(body, maxBytes, slug, (milliseconds) => (stream.retryMs = milliseconds))) {
          if (event.id !== undefined) stream.lastEventId = event.id;
          if (isMessageEvent(event)) yield streamItemOf(event.data);
        }
      } catch (error) {
        throw upstreamFailure(slug, error, timeoutSeconds);
      }
    },
  };
  return stream;
}

/**
 * One HTTP exchange with the upstream up to its response headers; every failure as a GatewayRpcError. Its CLIENT
 * span ends with the headers: a GET stream lasts as long as the session.
 */
export async function exchange(
  endpoint: UpstreamEndpoint,
  method: 'POST' | 'GET',
  accept: string,
  body: string | undefined,
  options: { dispatcher: Dispatcher; signal: AbortSignal; timeoutSeconds: number },
  extraHeaders: Record<string, string> = {},
): Promise<Dispatcher.ResponseData> {
  const span = startUpstreamSpan(method, endpoint.url);
  try {
    const response = await request(endpoint.url, {
      method,
      dispatcher: options.dispatcher,
      headers: { ...headersFor(endpoint, accept, body !== undefined, span), ...extraHeaders },
      ...(body !== undefined ? { body } : {}),
      signal: options.signal,
      headersTimeout: options.timeoutSeconds * 1000,
      bodyTimeout: 0,
    });
    recordUpstreamStatus(span, response.statusCode);
    endUpstreamSpan(span);
    return response;
  } catch (error) {
    const failure = upstreamFailure(endpoint.serverSlug, error, options.timeoutSeconds);
    endUpstreamSpan(span, failure);
    throw failure;
  }
}

export interface PostOptions extends PostLimits {
  dispatcher: Dispatcher;
}

/** POSTs one JSON-RPC message to the upstream. Throws GatewayRpcError for every failure. */
export async function postToUpstream(endpoint: UpstreamEndpoint, message: JsonRpcMessage, options: PostOptions): Promise<UpstreamAnswer> {
  if (endpoint.legacy) return endpoint.legacy.send(message, endpoint.headers, signalOf(options.signal));
  const answer = await new Promise<PostAnswer>((resolve, reject) => {
    if (options.signal.aborted) return reject(upstreamFailure(endpoint.serverSlug, options.signal.reason, options.timeoutSeconds));
    const url = new URL(endpoint.url);
    const span = startUpstreamSpan('POST', url);
    options.dispatcher.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        headers: headersFor(endpoint, ACCEPT_BOTH, true, span),
        body: JSON.stringify(message),
        headersTimeout: options.timeoutSeconds * 1000,
        bodyTimeout: 0,
      },
      new PostHandler(endpoint.serverSlug, options, resolve, reject, span),
    );
  });
  const { statusCode, headers } = answer;
  const sessionId = firstHeader(headers['mcp-session-id']);
  if (statusCode === 202) return { kind: 'accepted' };
  if (statusCode === 404 && endpoint.sessionId) return { kind: 'session_expired' };
  if (statusCode < 200 || statusCode >= 300) throw httpError(endpoint.serverSlug, statusCode);
  if (answer.items) return { kind: 'stream', messages: answer.items, sessionId };
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

/**
 * Opens the upstream's GET stream (server-initiated messages), or says why there is none: `no_stream` when the
 * upstream offers none (405, or 404 to a request without a session: a stateless server); `session_expired` when it
 * no longer knows the session (404 with a session id, as for a POST: it restarted); `conflict` when it already has a
 * GET stream for the session and allows one (409, the SDK's answer).
 */
export async function openUpstreamStream(
  endpoint: UpstreamEndpoint,
  options: { dispatcher: Dispatcher; signal: AbortSignal; timeoutSeconds: number; maxMessageBytes: number },
): Promise<{ kind: 'stream'; items: AsyncIterable<UpstreamStreamItem> } | { kind: 'no_stream' } | { kind: 'session_expired' } | { kind: 'conflict' }> {
  if (endpoint.legacy) return { kind: 'stream', items: endpoint.legacy.unsolicited(options.signal) };
  const { statusCode, headers, body } = await exchange(endpoint, 'GET', 'text/event-stream', undefined, options);
  if (statusCode === 405 || statusCode === 404 || statusCode === 409) {
    dropBody(body);
    if (statusCode === 409) return { kind: 'conflict' };
    return { kind: statusCode === 404 && endpoint.sessionId ? 'session_expired' : 'no_stream' };
  }
  if (statusCode !== 200 || !firstHeader(headers['content-type']).toLowerCase().startsWith('text/event-stream')) {
    dropBody(body);
    throw statusCode === 200 ? protocolError(endpoint.serverSlug, 'a GET stream that is not text/event-stream') : httpError(endpoint.serverSlug, statusCode);
  }
  return { kind: 'stream', items: sseItems(body, options.maxMessageBytes, endpoint.serverSlug, options.timeoutSeconds) };
}

/**
 * Picks up a POST's answer stream that the upstream ended before the answer (MCP 2025-11-25 lets a server close a
 * stream after an event id and have the client poll): a GET with `Last-Event-ID` replays what followed that event.
 */
export async function resumeUpstreamStream(
  endpoint: UpstreamEndpoint,
  lastEventId: string,
  options: { dispatcher: Dispatcher; signal: AbortSignal; timeoutSeconds: number; maxMessageBytes: number },
): Promise<UpstreamStream> {
  const { statusCode, headers, body } = await exchange(endpoint, 'GET', 'text/event-stream', undefined, options, { 'last-event-id': lastEventId });
  if (statusCode !== 200 || !firstHeader(headers['content-type']).toLowerCase().startsWith('text/event-stream')) {
    dropBody(body);
    throw statusCode === 200 ? protocolError(endpoint.serverSlug, 'a resumed stream that is not text/event-stream') : httpError(endpoint.serverSlug, statusCode);
  }
  return sseItems(body, options.maxMessageBytes, endpoint.serverSlug, options.timeoutSeconds);
}

/** Ends the upstream session (DELETE); failures are ignored: the upstream forgets idle sessions by itself. */
export async function endUpstreamSession(endpoint: UpstreamEndpoint, options: { dispatcher: Dispatcher; timeoutSeconds: number }): Promise<void> {
  if (!endpoint.sessionId) return;
  const span = startUpstreamSpan('DELETE', endpoint.url);
  try {
    const { statusCode, body } = await request(endpoint.url, {
      method: 'DELETE',
      dispatcher: options.dispatcher,
      headers: headersFor(endpoint, ACCEPT_BOTH, false, span),
      signal: AbortSignal.timeout(options.timeoutSeconds * 1000),
    });
    recordUpstreamStatus(span, statusCode);
    endUpstreamSpan(span);
    dropBody(body);
  } catch (error) {
    // The upstream is gone or slow: its session expires on its side.
    if (span) endUpstreamSpan(span, upstreamFailure(endpoint.serverSlug, error, options.timeoutSeconds));
  }
}
