import type { Dispatcher } from 'undici';
import type { Span } from '@platform/runtime';
import type { GatewayRpcError } from './jsonrpc';
import { isMessageEvent, SseDecoder } from './sse-decoder';
import { onStopped, type ExchangeStop } from './stop-switch';
import { protocolError, upstreamFailure } from './upstream-errors';
import { heldBytesOf, streamItemOf, type UpstreamStream, type UpstreamStreamItem } from './upstream-items';
import { endUpstreamSpan, recordUpstreamStatus } from './upstream-span';

/** An upstream's answer to a POST: a JSON body read whole, an SSE body as items, or neither (drained and dropped). */
export interface PostAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  type: string;
  text?: string;
  items?: UpstreamStream;
}

export interface PostLimits {
  /** Stops the exchange early (timeouts, client went away, cancellation). */
  signal: ExchangeStop;
  maxMessageBytes: number;
  timeoutSeconds: number;
}

/**
 * Items an SSE answer may hold unread before the upstream is paused; it is paused sooner when they hold the largest
 * message's worth of memory (`heldBytesOf`): 32 messages of the largest size would be 32 times what one may be.
 */
const HIGH_WATER_ITEMS = 32;
/** After the reader stopped early (or for a body nobody reads), how long the rest may take before it is cut. */
export const DRAIN_GRACE_MS = 2_000;
/** Made once: a reason built per exchange would capture (and source-map) a stack every time. */
const READER_STOPPED = new Error('the reader of the upstream answer stopped');

/**
 * One POST to an upstream through undici's dispatcher API rather than `request()`: a JSON answer is gathered straight
 * from the socket's chunks and an SSE answer is decoded as it arrives into items for one reader, with no body stream,
 * async generator or promise per chunk in between (the data plane's hot path). The upstream is paused while the
 * reader lags. A reader that stops at the answer it wanted lets the rest drain briefly, so the keep-alive connection
 * survives; every failure reaches the caller as a GatewayRpcError (before the answer) or through the items.
 * The exchange's CLIENT span, when the request is traced, ends with the answer: at its end, or when the reader has
 * what it wanted from an SSE answer (the rest only drains), or at its failure.
 */
export class PostHandler implements Dispatcher.DispatchHandler {
  private answer?: PostAnswer;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private ended = false;
  private stream?: StreamItems;
  private decoder?: SseDecoder;
  /** Whether the body is a 2xx JSON answer to gather (decided once, at the response's start). */
  private gathering = false;
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly slug: string,
    private readonly limits: PostLimits,
    private readonly resolve: (answer: PostAnswer) => void,
    private readonly reject: (error: GatewayRpcError) => void,
    private span?: Span,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.stopListening = onStopped(this.limits.signal, () => controller.abort(this.limits.signal.reason as Error));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    const type = firstHeader(headers['content-type']).toLowerCase();
    const answer: PostAnswer = { statusCode, headers, type };
    this.answer = answer;
    recordUpstreamStatus(this.span, statusCode);
    this.gathering = isSuccess(statusCode) && type.startsWith('application/json');
    if (isSuccess(statusCode) && type.startsWith('text/event-stream')) {
      const stream = new StreamItems(controller, this.limits.maxMessageBytes, () => this.readerStopped(controller));
      this.stream = stream;
      this.decoder = new SseDecoder(
        (event) => {
          if (event.id !== undefined) stream.lastEventId = event.id;
          if (isMessageEvent(event)) stream.push(streamItemOf(event.data));
        },
        this.limits.maxMessageBytes,
        (milliseconds) => (stream.retryMs = milliseconds),
      );
      answer.items = stream;
      this.settle(answer);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.stream) {
      if (this.stream.stopped) return;
      if (!this.decoder!.feed(chunk)) {
        const failure = protocolError(this.slug, `a message larger than ${this.limits.maxMessageBytes} bytes`);
        this.endSpan(failure);
        this.stream.fail(failure);
        controller.abort(READER_STOPPED);
      }
      return;
    }
    // Only a 2xx JSON body is read; any other body is drained and dropped.
    if (!this.gathering) return;
    this.size += chunk.length;
    if (this.size > this.limits.maxMessageBytes) {
      const failure = protocolError(this.slug, `a message larger than ${this.limits.maxMessageBytes} bytes`);
      this.endSpan(failure);
      this.fail(failure);
      controller.abort(READER_STOPPED);
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.ended = true;
    this.endSpan();
    this.done();
    if (this.stream) {
      this.stream.end();
      return;
    }
    const answer = this.answer!;
    if (this.gathering) answer.text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.settle(answer);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.ended = true;
    this.done();
    const failure = upstreamFailure(this.slug, error, this.limits.timeoutSeconds);
    this.endSpan(failure);
    if (this.stream) this.stream.fail(failure);
    else this.fail(failure);
  }

  /** The reader has what it wanted: the rest of the answer is dropped, and cut if it does not end soon. */
  private readerStopped(controller: Dispatcher.DispatchController): void {
    if (this.ended) return;
    this.endSpan();
    this.done();
    controller.resume();
    setTimeout(() => {
      if (!this.ended) controller.abort(READER_STOPPED);
    }, DRAIN_GRACE_MS).unref();
  }

  /** Ends the CLIENT span once, at the first of the answer's end, the reader's stop or a failure. */
  private endSpan(failure?: GatewayRpcError): void {
    if (!this.span) return;
    endUpstreamSpan(this.span, failure);
    this.span = undefined;
  }

  private done(): void {
    this.stopListening?.();
    this.stopListening = undefined;
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

/**
 * The items of one SSE answer, handed from undici's callbacks to one async reader. Pauses the upstream while more
 * than a few items, or more than `maxHeldBytes` of them, wait unread and resumes it when the reader catches up;
 * `onStop` hears a reader that left early.
 */
class StreamItems implements UpstreamStream, AsyncIterator<UpstreamStreamItem> {
  stopped = false;
  lastEventId: string | undefined;
  retryMs: number | undefined;
  private readonly queue: UpstreamStreamItem[] = [];
  private heldBytes = 0;
  private ended = false;
  private error: unknown;
  private waiting?: { resolve: (result: IteratorResult<UpstreamStreamItem>) => void; reject: (error: unknown) => void };

  constructor(
    private readonly controller: Dispatcher.DispatchController,
    private readonly maxHeldBytes: number,
    private readonly onStop: () => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<UpstreamStreamItem> {
    return this;
  }

  push(item: UpstreamStreamItem): void {
    if (this.stopped) return;
    const waiting = this.take();
    if (waiting) return waiting.resolve({ value: item, done: false });
    this.queue.push(item);
    this.heldBytes += heldBytesOf(item);
    if (this.queue.length >= HIGH_WATER_ITEMS || this.heldBytes >= this.maxHeldBytes) this.controller.pause();
  }

  end(): void {
    this.ended = true;
    this.take()?.resolve({ value: undefined, done: true });
  }

  fail(error: unknown): void {
    if (this.ended || this.error !== undefined) return;
    this.error = error;
    this.take()?.reject(error);
  }

  next(): Promise<IteratorResult<UpstreamStreamItem>> {
    const item = this.queue.shift();
    if (item) {
      this.heldBytes -= heldBytesOf(item);
      if (this.controller.paused && this.queue.length < HIGH_WATER_ITEMS / 2 && this.heldBytes < this.maxHeldBytes / 2) this.controller.resume();
      return Promise.resolve({ value: item, done: false });
    }
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.ended || this.stopped) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<UpstreamStreamItem>> {
    if (!this.stopped) {
      this.stopped = true;
      this.queue.length = 0;
      this.heldBytes = 0;
      this.onStop();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  private take() {
    const waiting = this.waiting;
    this.waiting = undefined;
    return waiting;
  }
}

function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300 && statusCode !== 202;
}

export function firstHeader(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}
