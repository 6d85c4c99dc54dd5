import { createGuardedDispatcher, type ParsedCidr } from '@platform/runtime';
import { fetch as undiciFetch, Response as UndiciResponse, type RequestInit as UndiciRequestInit } from 'undici';

/**
 * The most one discovery or health check reads from an upstream in all, every answer and stream together: far more
 * than 10,000 capabilities' definitions take, and a bound on what a registered server can make the catalog hold
 * (the SDK client reads each JSON answer whole before anything counts its items).
 */
export const MAX_UPSTREAM_BYTES = 64 * 1024 * 1024;

export interface GuardedFetch {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  /** Aborted once the upstream has sent more than the limit: what it sent is refused, and the SDK's requests stop. */
  overflowed: AbortSignal;
  close(): Promise<void>;
}

/**
 * A fetch for the SDK whose every connection passes the address guard (undici with the guarded dispatcher), never
 * through a proxy, never following a redirect by itself, and whose answers together may hold at most `maxBytes`.
 */
export function guardedFetchFor(allowedNetworks: readonly ParsedCidr[], timeoutMs: number, maxBytes = MAX_UPSTREAM_BYTES): GuardedFetch {
  const dispatcher = createGuardedDispatcher({ allowedNetworks, connectTimeoutMs: timeoutMs });
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
  return { fetch, overflowed: overflow.signal, close: () => dispatcher.close() };
}
