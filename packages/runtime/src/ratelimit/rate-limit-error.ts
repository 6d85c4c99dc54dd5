import { AppError } from '../errors';
import type { RateLimitDecision } from './rate-limiter';

/** The error to throw for a refused decision: HTTP 429 / RESOURCE_EXHAUSTED with a Retry-After header. */
export function rateLimitError(decision: RateLimitDecision): AppError {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterSeconds));
  return new AppError('slow_down', `Too many requests; retry after ${seconds} second${seconds === 1 ? '' : 's'}`, {
    headers: { 'Retry-After': String(seconds) },
  });
}
