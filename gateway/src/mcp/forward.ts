import type { RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import type { ClientReply } from './client-reply';
import { endpointFor, type CallContext } from './data-plane';
import {
  errorResponse,
  GatewayRpcError,
  isNotification,
  isRequest,
  isResponse,
  progressTokenOf,
  RPC,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './jsonrpc';
import { questionForClient, relayIdOf } from './relay-ids';
import { pauseUnlessStopped, StopSwitch, type ExchangeStop } from './stop-switch';
import { postToUpstream, resumeUpstreamStream, type UpstreamAnswer, type UpstreamEndpoint } from './upstream-client';
import type { UpstreamStream } from './upstream-items';

/** After relaying a question to the client (elicitation, sampling), how long the upstream may stay silent. */
const AWAITING_CLIENT_MS = 10 * 60 * 1000;
/**
 * How long to wait before resuming an upstream's answer stream when it named no `retry`, at the most, and at the least
 * (an upstream that names `retry: 0` and ends every stream at once would otherwise be asked again in a tight loop).
 */
const RESUME_AFTER_MS = 1_000;
const MAX_RESUME_WAIT_MS = 30_000;
const MIN_RESUME_WAIT_MS = 100;
const PROGRESS = 'notifications/progress';
const LIST_CHANGED = new Set(['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed']);

/**
 * What an upstream sends the client besides answers, made fit for the client: its own requests get relay ids and relay
 * progress tokens (the client's answer and progress find their way back through any replica), cancellations of
 * them name those ids, and its log messages name it. A list change also makes the catalog re-discover the server,
 * since only approved definitions are exposed.
 */
export function toClient(ctx: CallContext, server: RuntimeServer, message: JsonRpcMessage): JsonRpcMessage | null {
  if (isRequest(message)) return questionForClient(server.id, message);
  if (isNotification(message)) {
    if (LIST_CHANGED.has(message.method)) ctx.plane.refreshSoon(server);
    if (message.method === 'notifications/cancelled' && message.params && (typeof message.params.requestId === 'string' || typeof message.params.requestId === 'number')) {
      return { ...message, params: { ...message.params, requestId: relayIdOf(server.id, message.params.requestId) } };
    }
    if (message.method === 'notifications/message' && message.params && server.prefix !== '') return attributedLog(server.prefix, message);
    return message;
  }
  return null;
}

/**
 * A log message under the name of its server, as the server's tools are named (docs/gateway.md, Aggregated
 * semantics): its `logger` becomes `{prefix}__{logger}`, or `{prefix}` when it named none, so the client can tell
 * whose it is (the gateway is one server to it, and two upstreams may use one logger name). An empty prefix leaves
 * names alone.
 */
function attributedLog(prefix: string, message: JsonRpcNotification): JsonRpcNotification {
  const logger = message.params?.logger;
  return { ...message, params: { ...message.params, logger: typeof logger === 'string' && logger !== '' ? `${prefix}__${logger}` : prefix } };
}

/** The upstream request's abort reason when the exchange stops (made once: a reason per exchange would capture a stack). */
const EXCHANGE_STOPPED = Object.assign(new Error('the exchange was stopped'), { name: 'AbortError' });

/**
 * Why an exchange was stopped early, set by whoever stopped it: the upstream silent longer than the server's timeout,
 * the exchange longer than MCP_MAX_EXCHANGE_SECONDS in all, a cancellation, or the client gone.
 */
type StopReason = 'timeout' | 'deadline' | 'cancelled' | 'client_gone';

export interface ForwardOutcome {
  /** The upstream's answer (or the gateway's error) as sent to the client; undefined when cancelled. */
  response?: JsonRpcResponse;
}

/**
 * Sends one client request to an upstream and relays everything that comes back until the answer: the answer as
 * JSON when nothing else came first, otherwise an SSE stream; a client that accepts one type only gets that type
 * (client-reply.ts), and when it is JSON nothing before the answer (relayStream). The upstream has the server's
 * timeout to start answering and to go quiet between messages (long waits for the client's answer to a relayed
 * question excepted).
 * Cancellation (`notifications/cancelled` on any replica) and the client going away end the exchange.
 */
export async function forwardRequest(
  ctx: CallContext,
  server: RuntimeServer,
  request: JsonRpcRequest,
  reply: ClientReply,
): Promise<ForwardOutcome> {
  const stopSwitch = new StopSwitch();
  let stopped: StopReason | undefined;
  const stop = (reason: StopReason) => {
    if (stopped) return;
    stopped = reason;
    stopSwitch.stop(EXCHANGE_STOPPED);
  };

  let endpoint: UpstreamEndpoint | undefined;
  // The upstream hears why its request stopped (MCP: a sender that gives up SHOULD send a cancellation).
  const tellUpstreamCancelled = (reason: string | undefined) => {
    if (endpoint) cancelUpstreamRequest(ctx, server, endpoint, request.id, reason);
  };
  const unregister = ctx.plane.inFlight.add(ctx.sessionKey, request.id, {
    serverId: server.id,
    cancel(reason) {
      // The exchange ends without an answer, as MCP prescribes.
      tellUpstreamCancelled(reason);
      stop('cancelled');
    },
  });
  // The client closing its connection before the answer ends the exchange. Listened to only once registered above,
  // which refuses a request id already in flight (and would leave this listener behind).
  const stopHearingClient = reply.onClientGone(() => stop('client_gone'));

  let idleLimitMs = server.timeoutSeconds * 1000;
  const deadline = Date.now() + ctx.plane.settings.maxExchangeSeconds * 1000;
  let idle: NodeJS.Timeout | undefined;
  // One timer serves both limits: it fires after the allowed silence, or at the deadline if that comes first.
  const armIdle = () => {
    clearTimeout(idle);
    const untilDeadline = deadline - Date.now();
    idle = untilDeadline < idleLimitMs ? setTimeout(() => stop('deadline'), Math.max(0, untilDeadline)) : setTimeout(() => stop('timeout'), idleLimitMs);
  };

  try {
    armIdle();
    endpoint = await endpointFor(ctx, server);
    const options = { dispatcher: ctx.plane.dispatcher, signal: stopSwitch, maxMessageBytes: ctx.plane.settings.maxMessageBytes, timeoutSeconds: server.timeoutSeconds };
    let answer: UpstreamAnswer = await postToUpstream(endpoint, request, options);
    if (answer.kind === 'session_expired') {
      endpoint = await endpointFor(ctx, server, endpoint);
      answer = await postToUpstream(endpoint, request, options);
    }
    switch (answer.kind) {
      case 'json': {
        if (!isResponse(answer.message) || answer.message.id !== request.id) throw malformed(server);
        reply.final(answer.message, answer.text);
        return { response: answer.message };
      }
      case 'stream': {
        const upstream = endpoint;
        const resume = async (lastEventId: string, retryMs: number | undefined) => {
          await pauseUnlessStopped(Math.max(MIN_RESUME_WAIT_MS, Math.min(retryMs ?? RESUME_AFTER_MS, MAX_RESUME_WAIT_MS)), stopSwitch);
          return resumeUpstreamStream(upstream, lastEventId, { ...options, signal: stopSwitch.signal });
        };
        return await relayStream(ctx, server, request, answer.messages, reply, {
          onActivity: armIdle,
          refuseQuestion: (question) => refuseUpstreamQuestion(ctx, server, upstream, question),
          onQuestionRelayed: () => {
            idleLimitMs = Math.max(idleLimitMs, AWAITING_CLIENT_MS);
            // Re-armed now: the timer armed for this message still counted the server's timeout.
            armIdle();
          },
          resume,
          stop: stopSwitch,
        });
      }
      default:
        throw malformed(server);
    }
  } catch (error) {
    if (stopped === 'cancelled' || stopped === 'client_gone') {
      reply.end();
      return {};
    }
    if (stopped === 'timeout') {
      tellUpstreamCancelled(`no answer within ${server.timeoutSeconds} s`);
      throw new GatewayRpcError(RPC.requestTimeout, `Upstream server '${server.slug}' did not answer within ${server.timeoutSeconds} s`, 'timeout', 'timeout');
    }
    if (stopped === 'deadline') {
      const limit = ctx.plane.settings.maxExchangeSeconds;
      tellUpstreamCancelled(`not finished within the gateway's limit of ${limit} s`);
      throw new GatewayRpcError(RPC.requestTimeout, `Upstream server '${server.slug}' did not finish within the gateway's limit of ${limit} s for one request`, 'timeout', 'timeout');
    }
    throw error;
  } finally {
    clearTimeout(idle);
    unregister();
    stopHearingClient();
  }
}

/** Sends the upstream `notifications/cancelled` for its request, best effort and off the exchange's path. */
function cancelUpstreamRequest(ctx: CallContext, server: RuntimeServer, endpoint: UpstreamEndpoint, requestId: JsonRpcRequest['id'], reason: string | undefined): void {
  tellUpstream(ctx, server, endpoint, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, ...(reason !== undefined ? { reason } : {}) } });
}

/**
 * Answers a question an upstream asked during a request whose client accepts only JSON (elicitation, sampling, roots):
 * nothing but the answer reaches that client, so it cannot be asked, and the upstream is told at once, with the error
 * an SDK client gives a request it has no handler for, rather than left waiting for an answer that cannot come. It
 * does not go to the session's GET stream: MCP has that stream carry messages unrelated to requests in flight, and it
 * may be held by another replica.
 */
function refuseUpstreamQuestion(ctx: CallContext, server: RuntimeServer, endpoint: UpstreamEndpoint, question: JsonRpcRequest): void {
  const message = `Method not found: the client accepts only application/json on this request, so '${question.method}' cannot reach it`;
  tellUpstream(ctx, server, endpoint, errorResponse(question.id, RPC.methodNotFound, message));
}

/** POSTs a message the upstream is owed, best effort and off the exchange's path. */
function tellUpstream(ctx: CallContext, server: RuntimeServer, endpoint: UpstreamEndpoint, message: JsonRpcNotification | JsonRpcResponse): void {
  void postToUpstream(endpoint, message, {
    dispatcher: ctx.plane.dispatcher,
    signal: AbortSignal.timeout(server.timeoutSeconds * 1000),
    maxMessageBytes: 65_536,
    timeoutSeconds: server.timeoutSeconds,
  }).catch(() => undefined);
}

function malformed(server: RuntimeServer): GatewayRpcError {
  return new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${server.slug}' answered with a malformed message`, 'error', 'protocol_error');
}

interface StreamRelay {
  /** Any message from the upstream: the exchange is alive. */
  onActivity: () => void;
  /** A question the client cannot be asked (it accepts only JSON): the upstream is answered with an error. */
  refuseQuestion: (question: JsonRpcRequest) => void;
  /** A question went to the client: the upstream may now wait for its answer. */
  onQuestionRelayed: () => void;
  /** Picks up the stream after the event with this id (after the upstream's `retry` wait). */
  resume: (lastEventId: string, retryMs: number | undefined) => Promise<UpstreamStream>;
  /** The exchange's stop: a wait for a slow client ends with it (the idle timeout, a cancel, the client gone). */
  stop: ExchangeStop;
}

/**
 * Relays an upstream's answer stream to the client until the answer (its progress only under the request's own token).
 * A stream that ends (or breaks) before the answer after an event id is resumed from that id (MCP 2025-11-25), as
 * often as the upstream asks; the exchange's timeout still bounds how long it may stay silent.
 */
async function relayStream(ctx: CallContext, server: RuntimeServer, request: JsonRpcRequest, items: UpstreamStream, reply: ClientReply, relay: StreamRelay): Promise<ForwardOutcome> {
  const progressToken = progressTokenOf(request);
  let stream = items;
  for (;;) {
    try {
      for await (const item of stream) {
        relay.onActivity();
        if ('malformed' in item) throw malformed(server);
        const message = item.message;
        if (isResponse(message)) {
          if (message.id !== request.id) continue;
          reply.final(message, item.text);
          return { response: message };
        }
        if (isOtherProgress(message, progressToken)) continue;
        if (!reply.takesStream) {
          // A client that accepts only JSON gets the answer alone: a question is refused upstream, a notification
          // dropped (after toClient, so that a list change still has the catalog re-discover the server).
          if (isRequest(message)) relay.refuseQuestion(message);
          else if (!toClient(ctx, server, message)) throw malformed(server);
          continue;
        }
        const relayed = toClient(ctx, server, message);
        if (!relayed) throw malformed(server);
        if (isRequest(relayed)) relay.onQuestionRelayed();
        reply.send(relayed as JsonRpcRequest | JsonRpcNotification);
        const taken = reply.drained(relay.stop);
        if (taken) await taken;
      }
    } catch (error) {
      if (stream.lastEventId === undefined || !isBrokenConnection(error)) throw error;
    }
    if (stream.lastEventId === undefined) {
      throw new GatewayRpcError(RPC.upstreamProtocolError, `Upstream server '${server.slug}' closed the stream without answering`, 'error', 'protocol_error');
    }
    stream = await relay.resume(stream.lastEventId, stream.retryMs);
  }
}

/**
 * Progress under a token other than the request's own (`token`, undefined when it asked for none), dropped: MCP has
 * progress name the token of an active request, and the client ties it to a request by the token alone, so an
 * upstream must not report on another one (the client's request to another upstream, or one that has ended).
 */
function isOtherProgress(message: JsonRpcMessage, token: unknown): boolean {
  if ((message as JsonRpcNotification).method !== PROGRESS) return false;
  return token === undefined || (message as JsonRpcNotification).params?.progressToken !== token;
}

/** A stream that broke on the way (not a malformed message, not a stop): worth resuming. */
function isBrokenConnection(error: unknown): boolean {
  return error instanceof GatewayRpcError && error.errorClass === 'unreachable';
}
