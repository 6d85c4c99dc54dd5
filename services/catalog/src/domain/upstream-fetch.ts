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

/**
 * The most JSON objects and arrays one discovery reads from an upstream, every answer together (counted as `{` and `[`
 * bytes, those inside strings too). Bytes alone do not bound what an answer costs once parsed: 16 MiB of `[{},{},…]`
 * is 5.6 million objects, about 340 MiB of heap, where 16 MiB of any other shape builds at most about 80. This bound
 * keeps the worst discovery near 150 MiB. A real definition has tens of them (a schema's properties, annotations):
 * 10,000 capabilities (MAX_CAPABILITIES_PER_SERVER) of 100 each fit.
 */
export const MAX_DISCOVERY_CONTAINERS = 1_000_000;

/** A byte count in MiB, as refusals name it. */
const inMiB = (bytes: number): string => `${bytes / (1024 * 1024)} MiB`;

export interface GuardedFetch {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  /**
   * Aborted once the upstream has sent more than the limit of bytes or of JSON containers (MAX_DISCOVERY_CONTAINERS):
   * what it sent is refused, and the SDK's requests stop. Its reason's message says which, in the platform's words.
   */
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
  let containers = 0;
  // undici's own Response throughout, as before the count was added: the SDK reads it the same way.
  const counted = (response: UndiciResponse): Response => {
    if (!response.body) return response as unknown as Response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          read += chunk.byteLength;
          containers += containersIn(chunk);
          if (read <= maxBytes && containers <= MAX_DISCOVERY_CONTAINERS) return controller.enqueue(chunk);
          const error = new Error(
            read > maxBytes
              ? `it sent more than ${inMiB(maxBytes)}, the most the platform reads from one server at a time`
              : `it sent more than ${MAX_DISCOVERY_CONTAINERS.toLocaleString('en-US')} JSON objects and arrays, the most the platform reads from one server at a time`,
          );
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

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** How many `{` and `[` a piece of an answer holds: each opens a JSON object or array, unless inside a string. */
function containersIn(chunk: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < chunk.length; i++) {
    const byte = chunk[i];
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) count++;
  }
  return count;
}
