import { AppError } from '../errors';

/**
 * A URL or an address refused by the address guard. An AppError (`address_not_allowed`, 422) so that it can bubble
 * straight to the API when a URL is being saved. The message names the reason category but never the resolved
 * address, so callers cannot map internal DNS through it; `address` is kept for logs.
 */
export class AddressNotAllowedError extends AppError {
  readonly reason: string;
  readonly address: string | undefined;

  constructor(reason: string, address?: string) {
    super('address_not_allowed', `The URL is not allowed: ${reason}`);
    this.name = 'AddressNotAllowedError';
    this.reason = reason;
    this.address = address;
  }
}

/** Failures of `guardedFetch` other than a refused address. Messages never carry response bodies. */
export abstract class GuardedFetchError extends Error {
  abstract readonly code: 'fetch_timeout' | 'response_too_large' | 'fetch_failed';
}

export class FetchTimeoutError extends GuardedFetchError {
  readonly code = 'fetch_timeout';

  constructor(timeoutMs: number) {
    super(`The request did not complete within ${timeoutMs} ms`);
    this.name = 'FetchTimeoutError';
  }
}

export class ResponseTooLargeError extends GuardedFetchError {
  readonly code = 'response_too_large';

  constructor(maxBytes: number) {
    super(`The response body exceeds ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/** Connection refused, TLS failure, reset, malformed response: `cause` holds the transport error for logs. */
export class FetchFailedError extends GuardedFetchError {
  readonly code = 'fetch_failed';

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FetchFailedError';
  }
}
