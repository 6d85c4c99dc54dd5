import { createGuardedDispatcher, type ParsedCidr } from '@platform/runtime';
import { fetch as undiciFetch, Response as UndiciResponse, type RequestInit as UndiciRequestInit } from 'undici';

/**
 * The most a health check reads from an upstream in all, and a discovery until it is connected: an `initialize`
 * answer (and a `ping` one) is a few KiB, and what the SDK client parses and validates costs memory and time in
 * proportion (docs/catalog.md, How many bytes). Generous for long instructions or icons given inline.
 */
export const MAX_HANDSHAKE_BYTES = 1024 * 1024;

/**
 * The most one discovery reads from an upstream in all, every answer and stream together. 10,000 capabilities
 * (MAX_CAPABILITIES_PER_SERVER) of 1.6 KiB each on average, where a realistic definition (name, description, an
 * input schema of a few properties, annotations) takes 0.5 to 1 KiB and a whole real server a few hundred KiB; and a
 * bound on what one upstream makes the catalog parse (the SDK client reads each JSON answer whole).
 */
export const MAX_DISCOVERY_BYTES = 16 * 1024 * 1024;

/** A byte count in MiB, as refusals name it. */
export const inMiB = (bytes: number): string => `${bytes / (1024 * 1024)} MiB`;

export interface GuardedFetch {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  /** Aborted once the upstream has sent more than the limit: what it sent is refused, and the SDK's requests stop. */
  overflowed: AbortSignal;
  /** The limit in force. */
  readonly maxBytes: number;
  /** Raises the limit (a discovery, once connected, reads its lists). */
  allowBytes(maxBytes: number): void;
  /** Ends every connection at once, whatever is in flight. */
  close(): Promise<void>;
}

/**
 * A fetch for the SDK whose every connection passes the address guard (undici with the guarded dispatcher), never
 * through a proxy, never following a redirect by itself, and whose answers together may hold at most `maxBytes`.
 * Connecting, waiting for headers and waiting between two pieces of a body each take at most `timeoutMs` (undici's
 * own idle limits are 300 s); the exchange as a whole is bounded by its caller (upstream-client.ts, `raced`).
 */
export function guardedFetchFor(allowedNetworks: readonly ParsedCidr[], timeoutMs: number, maxBytes: number): GuardedFetch {
  const dispatcher = createGuardedDispatcher({ allowedNetworks, connectTimeoutMs: timeoutMs, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs });
  const overflow = new AbortController();
  let read = 0;
  // undici's own Response throughout, as before the count was added: the SDK reads it the same way.
  const counted = (response: UndiciResponse): Response => {
    if (!response.body) return response as unknown as Response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          read += chunk.byteLength;
          if (read <= maxBytes) return controller.enqueue(chunk);
          const error = new Error(`the upstream sent more than ${maxBytes} bytes`);
          overflow.abort(error);
          controller.error(error);
        },
      }),
    );
    return new UndiciResponse(body, { status: response.status, statusText: response.statusText, headers: response.headers }) as unknown as Response;
  };
  const fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    if (overflow.signal.aborted) throw overflow.signal.reason;
    return counted(await undiciFetch(url, { ...(init as UndiciRequestInit), redirect: 'manual', dispatcher }));
  };
  return {
    fetch,
    overflowed: overflow.signal,
    get maxBytes() {
      return maxBytes;
    },
    allowBytes(limit) {
      maxBytes = limit;
    },
    // destroy, not close: close waits for answers in flight, which an upstream may make last for ever.
    close: () => dispatcher.destroy(),
  };
}
