import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from './jsonrpc';
import type { AnswerTypes } from './media-types';
import { onStopped, type ExchangeStop } from './stop-switch';

export const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' };

/** A message as an SSE data line, which cannot hold a line break: text received over several lines is serialised afresh. */
function dataLineOf(message: JsonRpcMessage, text: string | undefined): string {
  return text !== undefined && !/[\r\n]/.test(text) ? text : JSON.stringify(message);
}

/**
 * The data plane's answer to one client HTTP request: a single JSON message, or an SSE stream of messages when
 * something must reach the client before the final answer (progress, logging, a relayed elicitation). Counts the
 * bytes it writes for the call record.
 */
export class ClientReply {
  bytes = 0;
  streaming = false;
  /** Whether the client takes messages before the answer, on a stream (false: it accepts only JSON, JsonOnlyReply). */
  readonly takesStream: boolean = true;
  /** The final message's text, for payload capture. */
  lastMessage = '';

  constructor(protected readonly res: ServerResponse) {}

  get finished(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  /**
   * One JSON answer (also used for errors before a stream began), headers and body in one write. `text`, when given,
   * is the message already serialised (an upstream's answer relayed unchanged).
   */
  json(status: number, message: JsonRpcMessage, headers: Record<string, string> = {}, text = JSON.stringify(message)): void {
    if (this.finished) return;
    if (this.streaming) {
      this.final(message);
      return;
    }
    const length = Buffer.byteLength(text);
    this.lastMessage = text;
    this.bytes += length;
    this.res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': length });
    this.res.end(text);
  }

  accepted(): void {
    if (!this.finished) this.res.writeHead(202).end();
  }

  startStream(headers: Record<string, string> = {}): void {
    if (this.streaming || this.finished) return;
    this.streaming = true;
    this.res.writeHead(200, { ...headers, ...STREAM_HEADERS });
    this.res.flushHeaders();
  }

  /** One message on the stream (starting it if needed); `text` is the message already serialised on one line. */
  send(message: JsonRpcMessage, text = JSON.stringify(message)): void {
    if (this.finished) return;
    this.startStream();
    this.res.write(this.event(text));
  }

  /**
   * Calls `listener` when the client goes before the reply is complete (its connection closes first: a complete reply
   * closes it too, which is not the client going); returns how to stop listening.
   */
  onClientGone(listener: () => void): () => void {
    const onClose = () => {
      if (!this.res.writableFinished) listener();
    };
    this.res.on('close', onClose);
    return () => this.res.off('close', onClose);
  }

  /**
   * Resolves once the client has taken what was written (its socket drained), has gone, or `stop` fires; undefined
   * when nothing is waiting to be taken. A relay waits on it before it pulls the next upstream message, so a client
   * that reads slowly slows its upstream down (the upstream's stream is paused, then TCP holds it back) instead of
   * the edge buffering what it cannot deliver.
   */
  drained(stop: ExchangeStop): Promise<void> | undefined {
    if (this.finished || !this.res.writableNeedDrain) return undefined;
    const taken = drainedOrClosed(this.res);
    return new Promise((resolve) => {
      let stopListening: () => void = () => undefined;
      const done = () => {
        stopListening();
        resolve();
      };
      stopListening = onStopped(stop, done);
      void taken.then(done);
    });
  }

  /** The request's answer: as JSON when nothing was streamed yet, else as the stream's last event. */
  final(message: JsonRpcMessage, text?: string): void {
    if (this.finished) return;
    if (!this.streaming) {
      this.json(200, message, {}, text);
      return;
    }
    const line = dataLineOf(message, text);
    this.lastMessage = line;
    this.res.end(this.event(line));
  }

  /** An SSE `message` event, counted. */
  protected event(text: string): string {
    const event = `event: message\ndata: ${text}\n\n`;
    this.bytes += Buffer.byteLength(event);
    return event;
  }

  /** A comment line that keeps idle proxies from closing the stream. */
  keepAlive(): void {
    if (!this.finished && this.streaming) this.res.write(': keep-alive\n\n');
  }

  end(): void {
    if (this.finished) return;
    if (!this.streaming) this.startStream();
    this.res.end();
  }
}

/**
 * The reply to a POST's request in what its client accepts (media-types.ts): the plain reply for a client that takes
 * both JSON and SSE (MCP's rule, and the hot path), otherwise one that never answers in the type it refused.
 */
export function replyFor(res: ServerResponse, answers: AnswerTypes): ClientReply {
  if (answers === 'any') return new ClientReply(res);
  return answers === 'json' ? new JsonOnlyReply(res) : new SseOnlyReply(res);
}

/**
 * The reply to a client that accepts only JSON: the answer alone. What an upstream sends before it is not for this
 * client (forward.ts drops notifications and refuses questions); a request that ends without an answer (cancelled)
 * gets 202 and no body, since an empty stream is not JSON.
 */
class JsonOnlyReply extends ClientReply {
  override readonly takesStream = false;

  override startStream(): void {}

  override send(): void {}

  override end(): void {
    this.accepted();
  }
}

/**
 * The reply to a client that accepts only SSE: an answer that would have gone as JSON goes as a stream of that one
 * event, headers and body in one write. HTTP errors of the transport stay JSON (endpoint.ts), as the SDK's server
 * answers them whatever the Accept.
 */
class SseOnlyReply extends ClientReply {
  override json(status: number, message: JsonRpcMessage, headers: Record<string, string> = {}, text?: string): void {
    if (status !== 200 || this.streaming || this.finished) {
      super.json(status, message, headers, text);
      return;
    }
    this.streaming = true;
    const line = dataLineOf(message, text);
    this.lastMessage = line;
    const event = this.event(line);
    this.res.writeHead(200, { ...headers, ...STREAM_HEADERS, 'content-length': Buffer.byteLength(event) });
    this.res.end(event);
  }
}

/** The wait for each response's socket to drain, while one is on. */
const drains = new WeakMap<ServerResponse, Promise<void>>();

/**
 * Resolves once the response's socket drains or the response closes. Several relays may write to one response (a
 * batch's requests, a GET stream's upstreams) and wait on it at once: they share one wait, since a listener each
 * would put as many on the response as there are relays, and Node takes more than 10 on one emitter for a leak (a
 * MaxListenersExceededWarning in the operator's log).
 */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  let wait = drains.get(res);
  if (!wait) {
    wait = new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        drains.delete(res);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
    drains.set(res, wait);
  }
  return wait;
}

/**
 * The one response a JSON-RPC batch's requests share, listened to once for all of them: each request's exchange
 * stops when the client goes, and a `close` listener each would put as many on the response as the batch has
 * requests (Node warns past 10, see drainedOrClosed). The one listener tells every exchange still running.
 */
export class BatchStream {
  private readonly goneListeners = new Set<() => void>();

  constructor(readonly res: ServerResponse) {
    res.once('close', () => {
      if (res.writableFinished) return;
      for (const listener of [...this.goneListeners]) listener();
    });
  }

  onClientGone(listener: () => void): () => void {
    // A function of its own per call, so the same listener given twice is held (and taken out) twice.
    const own = () => listener();
    this.goneListeners.add(own);
    return () => this.goneListeners.delete(own);
  }
}

/**
 * The reply of one request of a JSON-RPC batch: the batch's requests share one SSE stream, which the batch's
 * handler opens and ends (post.ts), and wait on it together (BatchStream). What comes before the answer and the
 * answer itself are events on it; the answer leaves the stream open for the other requests.
 */
export class BatchMemberReply extends ClientReply {
  private answered = false;

  constructor(private readonly batch: BatchStream) {
    super(batch.res);
    this.streaming = true;
  }

  override onClientGone(listener: () => void): () => void {
    return this.batch.onClientGone(listener);
  }

  override startStream(): void {}

  override accepted(): void {}

  override final(message: JsonRpcMessage, text?: string): void {
    if (this.finished || this.answered) return;
    this.answered = true;
    const line = dataLineOf(message, text);
    this.lastMessage = line;
    this.res.write(this.event(line));
  }

  override end(): void {
    this.answered = true;
  }
}

/**
 * The answers of a JSON-RPC batch whose client accepts only JSON: gathered, and sent as one JSON array once every
 * request is done (`end`); 202 and no body when none was answered (each cancelled).
 */
export class BatchAnswers extends BatchStream {
  private readonly texts: string[] = [];

  add(text: string): void {
    this.texts.push(text);
  }

  end(): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (this.texts.length === 0) {
      this.res.writeHead(202).end();
      return;
    }
    const body = `[${this.texts.join(',')}]`;
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }
}

/** The reply of one request of a batch whose client accepts only JSON: its answer joins the batch's (BatchAnswers). */
export class BatchAnswerReply extends ClientReply {
  override readonly takesStream = false;
  private answered = false;

  constructor(private readonly batch: BatchAnswers) {
    super(batch.res);
  }

  override onClientGone(listener: () => void): () => void {
    return this.batch.onClientGone(listener);
  }

  override json(_status: number, message: JsonRpcMessage, _headers?: Record<string, string>, text?: string): void {
    this.final(message, text);
  }

  override startStream(): void {}

  override send(): void {}

  override accepted(): void {}

  override final(message: JsonRpcMessage, text = JSON.stringify(message)): void {
    if (this.finished || this.answered) return;
    this.answered = true;
    this.lastMessage = text;
    this.bytes += Buffer.byteLength(text);
    this.batch.add(text);
  }

  override end(): void {
    this.answered = true;
  }
}
