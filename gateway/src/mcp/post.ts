import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { sliceCodePoints } from '@platform/runtime';
import { requestIdOf } from '../request-id';
import type { McpPrincipal } from '../oauth/resource-server';
import { isoTimestamp, principalOf, targetOf } from './call-context';
import { countMcpCall } from './call-metrics';
import { capUtf8 } from './call-payload';
import type { McpCallEvent } from './call-record';
import { BatchAnswerReply, BatchAnswers, BatchMemberReply, BatchStream, ClientReply, replyFor, STREAM_HEADERS } from './client-reply';
import { endpointFor, type CallContext, type DataPlane } from './data-plane';
import { forwardRequest } from './forward';
import { McpHttpError, readBody } from './http-errors';
import { initializeSession } from './initialize';
import {
  GatewayRpcError,
  isNotification,
  isRequest,
  isResponse,
  resultResponse,
  RPC,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './jsonrpc';
import { checkPostMediaTypes, type AnswerTypes } from './media-types';
import { routeRequest, type Route } from './methods';
import { parseProgressToken, parseRelayId } from './relay-ids';
import { requireSession } from './session-check';
import type { McpSession } from './session';
import { postToUpstream } from './upstream-client';

/**
 * POST /mcp/{slug}: one JSON-RPC message from the client, or a batch in a session of a protocol version that has
 * them. Requests are answered with JSON or an SSE stream, as the client accepts (client-reply.ts); notifications and
 * answers to relayed questions with 202.
 */
export async function handlePost(plane: DataPlane, req: IncomingMessage, res: ServerResponse, principal: McpPrincipal, readAt: number): Promise<void> {
  const started = process.hrtime.bigint();
  // Before the body is read: a POST's media types (415, 406) and what its answer may be.
  const answers = checkPostMediaTypes(req);
  const body = await readBody(req, plane.settings.maxMessageBytes);
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    throw new McpHttpError(400, RPC.parseError, 'Parse error: the body is not JSON');
  }
  // Before counting it, so that an oversized batch is told what is wrong with it rather than to wait.
  if (Array.isArray(message) && message.length > MAX_BATCH_MESSAGES) {
    throw new McpHttpError(400, RPC.invalidRequest, `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages`);
  }
  // What a POST holds counts against the person's caps until it ends: each request holds the client's socket and
  // its upstream's while it waits (a batch counts each of its requests), and each message relayed upstream unasked (a
  // notification, an answer to a relayed question) holds an upstream socket after its 202. Cancellations of the
  // client's own requests are never counted nor refused: they are what ends requests in flight.
  const requests = countOf(message, isRequest);
  const relays = countOf(message, isRelayedUpstream);
  const releaseRequests = requests > 0 ? plane.perPerson.requests.claim(principal.personId, requests) : undefined;
  let releaseRelays: (() => void) | undefined;
  try {
    releaseRelays = relays > 0 ? plane.perPerson.relays.claim(principal.personId, relays) : undefined;
    await servePost(plane, req, res, principal, readAt, message, started, body, answers);
  } finally {
    releaseRequests?.();
    releaseRelays?.();
  }
}

function countOf(message: unknown, kind: (message: unknown) => boolean): number {
  if (!Array.isArray(message)) return kind(message) ? 1 : 0;
  let count = 0;
  for (const item of message) if (kind(item)) count++;
  return count;
}

/** A client message that makes the gateway send something upstream without being a request: see relayNotification. */
function isRelayedUpstream(message: unknown): boolean {
  if (isResponse(message)) return true;
  if (!isNotification(message) || message.method === 'notifications/initialized') return false;
  // Progress goes to the upstream its token names; with a token the gateway never handed out, nowhere.
  if (message.method === 'notifications/progress') return parseProgressToken(message.params?.progressToken) !== null;
  if (message.method !== 'notifications/cancelled') return true;
  // Cancelling a question an upstream asked goes to that upstream; cancelling the client's own request stays here.
  const requestId = message.params?.requestId;
  return typeof requestId === 'string' && parseRelayId(requestId) !== null;
}

async function servePost(
  plane: DataPlane,
  req: IncomingMessage,
  res: ServerResponse,
  principal: McpPrincipal,
  readAt: number,
  message: unknown,
  started: bigint,
  body: Buffer,
  answers: AnswerTypes,
): Promise<void> {
  if (Array.isArray(message)) return handleBatch(plane, req, res, principal, readAt, message, started, answers);
  const reply = replyFor(res, answers);

  if (isRequest(message) && message.method === 'initialize') {
    const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
    let opened: Awaited<ReturnType<typeof initializeSession>>;
    try {
      opened = await initializeSession(plane, principal, resolved, message);
    } catch (error) {
      if (!(error instanceof GatewayRpcError)) throw error;
      reply.json(200, error.toResponse(message.id));
      record(plane, { principal, resolved, session: { clientName: '' } }, res, {
        method: 'initialize', exposedName: '', started, requestBytes: body.length, reply, outcome: error.outcome, errorClass: error.errorClass,
      });
      return;
    }
    reply.json(200, resultResponse(message.id, opened.result), { 'mcp-session-id': opened.sessionId });
    record(plane, { principal, resolved, session: opened.session }, res, {
      method: 'initialize', exposedName: '', started, requestBytes: body.length, reply, outcome: 'ok', errorClass: '',
    });
    return;
  }

  const { key, session } = await requireSession(plane, req, principal);
  const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
  const ctx: CallContext = { plane, principal, resolved, session, sessionKey: key };

  if (isResponse(message)) {
    await answerRelayedQuestion(ctx, message);
    reply.accepted();
    return;
  }
  if (isNotification(message)) {
    reply.accepted();
    await relayNotification(ctx, message);
    return;
  }
  if (!isRequest(message)) throw new McpHttpError(400, RPC.invalidRequest, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response (an id is a string or an integer of at most 2^53 - 1)');

  await serveRequest(ctx, res, reply, message, started, body);
}

/** The last protocol version with JSON-RPC batches: 2025-06-18 removed them, and servers of earlier ones MUST accept them. */
const LAST_VERSION_WITH_BATCHES = '2025-03-26';

/**
 * The most messages one batch may hold. Its requests run at the same time, each with its upstream connection and call
 * record: without a bound one POST of a few MB opened thousands of upstream sockets and stalled the event loop.
 */
export const MAX_BATCH_MESSAGES = 100;

/**
 * A JSON-RPC batch: each message is handled as if it were posted alone, its requests at the same time. Their answers,
 * and whatever their upstreams send before them, share one SSE stream that ends with the last answer; for a client
 * that accepts only JSON, the answers alone, as one JSON array once all are in. A batch without requests is answered
 * 202. Refused (400) in a session of a version without batches, and when empty, longer than MAX_BATCH_MESSAGES,
 * holding an `initialize` (never part of a batch) or anything but JSON-RPC messages.
 */
async function handleBatch(
  plane: DataPlane,
  req: IncomingMessage,
  res: ServerResponse,
  principal: McpPrincipal,
  readAt: number,
  messages: unknown[],
  started: bigint,
  answers: AnswerTypes,
): Promise<void> {
  const { key, session } = await requireSession(plane, req, principal);
  if (session.protocolVersion > LAST_VERSION_WITH_BATCHES) {
    throw new McpHttpError(400, RPC.invalidRequest, `Invalid Request: JSON-RPC batches are not part of protocol version ${session.protocolVersion}`);
  }
  if (messages.length === 0) throw new McpHttpError(400, RPC.invalidRequest, 'Invalid Request: an empty batch');
  if (!messages.every((message) => isRequest(message) || isNotification(message) || isResponse(message))) {
    throw new McpHttpError(400, RPC.invalidRequest, 'Invalid Request: a batch may hold only JSON-RPC 2.0 requests, notifications and responses');
  }
  if (messages.some((message) => isRequest(message) && message.method === 'initialize')) {
    throw new McpHttpError(400, RPC.invalidRequest, 'Invalid Request: initialize cannot be part of a batch');
  }
  const resolved = await plane.exposures.get(principal.gateway.slug, readAt);
  const ctx: CallContext = { plane, principal, resolved, session, sessionKey: key };
  // In the order of a single POST of each: answers before the 202 (a wrong one is refused), notifications after it.
  for (const message of messages) if (isResponse(message)) await answerRelayedQuestion(ctx, message);
  const requests = messages.filter(isRequest);
  if (requests.length === 0) res.writeHead(202).end();
  for (const message of messages) if (isNotification(message)) await relayNotification(ctx, message);
  if (requests.length === 0) return;
  const bodyOf = (request: JsonRpcRequest) => Buffer.from(JSON.stringify(request));
  if (answers === 'json') {
    const batch = new BatchAnswers(res);
    await Promise.all(requests.map((request) => serveRequest(ctx, res, new BatchAnswerReply(batch), request, started, bodyOf(request))));
    batch.end();
    return;
  }
  res.writeHead(200, STREAM_HEADERS);
  res.flushHeaders();
  const stream = new BatchStream(res);
  await Promise.all(requests.map((request) => serveRequest(ctx, res, new BatchMemberReply(stream), request, started, bodyOf(request))));
  res.end();
}

async function serveRequest(ctx: CallContext, res: ServerResponse, reply: ClientReply, request: JsonRpcRequest, started: bigint, body: Buffer): Promise<void> {
  let route: Route | undefined;
  let response: JsonRpcResponse | undefined;
  let outcome: McpCallEvent['outcome'] = 'ok';
  let errorClass = '';
  try {
    route = routeRequest(ctx.resolved.exposure, request);
    if (route.kind === 'local') {
      response = resultResponse(request.id, route.result);
      reply.final(response);
    } else if (route.kind === 'broadcast') {
      await broadcastRequest(ctx, request);
      response = resultResponse(request.id, {});
      reply.final(response);
    } else {
      const forwarded = await forwardRequest(ctx, route.server, route.message, reply);
      response = forwarded.response;
      if (!response) outcome = 'cancelled';
      else if ('error' in response) [outcome, errorClass] = ['error', 'upstream_error'];
      else if (request.method === 'tools/call' && response.result.isError === true) [outcome, errorClass] = ['error', 'tool_error'];
    }
  } catch (error) {
    const failure = error instanceof GatewayRpcError ? error : new GatewayRpcError(RPC.internalError, 'Internal error', 'error', 'internal');
    if (!(error instanceof GatewayRpcError)) ctx.plane.deps.logger.error({ err: error, method: request.method }, 'the MCP data plane failed a request');
    outcome = failure.outcome;
    errorClass = failure.errorClass;
    response = failure.toResponse(request.id);
    reply.final(response);
  }
  const server = route?.kind === 'upstream' ? route.server : undefined;
  record(ctx.plane, ctx, res, {
    // The catalog stores 200 characters of it; a client's longer (unknown) method need not cross the bus whole.
    method: sliceCodePoints(request.method, 200),
    exposedName: route?.exposedName ?? exposedNameOf(request),
    started,
    requestBytes: body.length,
    reply,
    outcome,
    errorClass,
    ...(server ? { server, capture: server.capturePayloads ? body.toString('utf8') : undefined } : {}),
  });
}

/** The name a refused request asked for, for its call record. */
function exposedNameOf(request: JsonRpcRequest): string {
  const params = request.params ?? {};
  const value = params.name ?? params.uri;
  return typeof value === 'string' ? sliceCodePoints(value, 500) : '';
}

/**
 * `logging/setLevel` goes to every upstream of the gateway; one that fails does not fail the client. One that forgot
 * the session (it restarted) gets it in a new session, as a forwarded request would.
 */
async function broadcastRequest(ctx: CallContext, request: JsonRpcRequest): Promise<void> {
  await Promise.allSettled(
    ctx.resolved.exposure.runtime.servers.map(async (server) => {
      const options = {
        dispatcher: ctx.plane.dispatcher,
        signal: AbortSignal.timeout(server.timeoutSeconds * 1000),
        maxMessageBytes: ctx.plane.settings.maxMessageBytes,
        timeoutSeconds: server.timeoutSeconds,
      };
      const endpoint = await endpointFor(ctx, server);
      let answer = await postToUpstream(endpoint, request, options);
      if (answer.kind === 'session_expired') answer = await postToUpstream(await endpointFor(ctx, server, endpoint), request, options);
      if (answer.kind === 'stream') for await (const item of answer.messages) if ('message' in item && isResponse(item.message)) break;
    }),
  );
}

/**
 * Client notifications: a cancellation goes to the exchange it names (on whichever replica holds it); progress of a
 * relayed question to the upstream that asked it, under its own token; the initialized notification was already sent
 * upstream at `initialize`; anything else (roots changed) goes to every upstream of the session.
 */
async function relayNotification(ctx: CallContext, notification: JsonRpcNotification): Promise<void> {
  if (notification.method === 'notifications/initialized') return;
  if (notification.method === 'notifications/cancelled') {
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const relayed = parseRelayId(requestId);
    if (relayed) {
      await sendToServer(ctx, relayed.serverId, { ...notification, params: { ...notification.params, requestId: relayed.upstreamId } });
      return;
    }
    const reason = notification.params?.reason;
    await ctx.plane.inFlight.cancel(ctx.sessionKey, requestId, typeof reason === 'string' ? reason : undefined);
    return;
  }
  if (notification.method === 'notifications/progress') {
    // The client reports progress only on questions the gateway relayed, each under a token naming its upstream.
    const relayed = parseProgressToken(notification.params?.progressToken);
    if (!relayed) {
      ctx.plane.deps.logger.debug('dropped a client progress notification whose token the gateway never handed out');
      return;
    }
    await sendToServer(ctx, relayed.serverId, { ...notification, params: { ...notification.params, progressToken: relayed.upstreamToken } });
    return;
  }
  await Promise.allSettled(ctx.resolved.exposure.runtime.servers.map((server) => sendToServer(ctx, server.id, notification)));
}

/** The client's answer to a question an upstream asked (sampling, elicitation, roots): back to that upstream. */
async function answerRelayedQuestion(ctx: CallContext, response: JsonRpcResponse): Promise<void> {
  const relayed = parseRelayId(response.id);
  if (!relayed || !ctx.resolved.exposure.servers.has(relayed.serverId)) {
    throw new McpHttpError(400, RPC.invalidRequest, 'Invalid Request: this response answers no request of this session');
  }
  await sendToServer(ctx, relayed.serverId, { ...response, id: relayed.upstreamId });
}

async function sendToServer(ctx: CallContext, serverId: string, message: JsonRpcNotification | JsonRpcResponse): Promise<void> {
  const server = ctx.resolved.exposure.servers.get(serverId);
  if (!server) return;
  const endpoint = await endpointFor(ctx, server);
  await postToUpstream(endpoint, message, {
    dispatcher: ctx.plane.dispatcher,
    signal: AbortSignal.timeout(server.timeoutSeconds * 1000),
    maxMessageBytes: ctx.plane.settings.maxMessageBytes,
    timeoutSeconds: server.timeoutSeconds,
  }).catch((error: unknown) => ctx.plane.deps.logger.warn({ err: error, serverId }, 'relaying a client message upstream failed'));
}

interface Recorded {
  method: string;
  exposedName: string;
  started: bigint;
  requestBytes: number;
  reply: ClientReply;
  outcome: McpCallEvent['outcome'];
  errorClass: string;
  server?: RuntimeServer;
  /** The request's text when the server captures payloads. */
  capture?: string | undefined;
}

/** Hands the call record to the recorder (buffered, published off the hot path). */
function record(plane: DataPlane, ctx: Pick<CallContext, 'principal' | 'resolved'> & { session: Pick<McpSession, 'clientName'> }, res: ServerResponse, call: Recorded): void {
  const gateway = ctx.resolved.exposure.runtime.gateway!;
  const request = call.capture !== undefined ? capUtf8(call.capture) : undefined;
  const response = call.capture !== undefined ? capUtf8(call.reply.lastMessage) : undefined;
  const elapsedMs = Number(process.hrtime.bigint() - call.started) / 1e6;
  countMcpCall(call.method, call.outcome, call.errorClass, elapsedMs / 1000);
  plane.recorder.record({
    teamId: gateway.teamId,
    occurredAt: isoTimestamp(),
    method: call.method,
    exposedName: call.exposedName,
    gateway: targetOf(gateway),
    ...(call.server ? { server: targetOf(call.server) } : {}),
    principal: principalOf(ctx.principal),
    clientName: ctx.session.clientName,
    outcome: call.outcome,
    errorClass: call.errorClass,
    latencyMs: Math.round(elapsedMs),
    requestBytes: call.requestBytes,
    responseBytes: call.reply.bytes,
    requestId: requestIdOf(res),
    ...(request && response
      ? { payloads: { request: request.text, response: response.text, requestTruncated: request.truncated, responseTruncated: response.truncated } }
      : {}),
  });
}

