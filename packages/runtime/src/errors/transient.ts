import { DatabaseUnavailableError } from '../db/errors';
import { sqlStateOf } from '../db/sql-state';
import { unavailableOr } from '../db/unavailable';
import { AppError } from './app-error';
import { codeForGrpcStatus, type ErrorCode } from './codes';
import { isError } from './is-error';

/**
 * Codes that say a dependency cannot serve now, not that the work is wrong: `unavailable` (DatabaseUnavailableError,
 * CacheUnavailableError, CacheTimeoutError, a service's gRPC UNAVAILABLE), `deadline_exceeded`, `slow_down` (a
 * platform rate limit, gRPC RESOURCE_EXHAUSTED with its code) and `maintenance` (refused until maintenance ends).
 */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['unavailable', 'deadline_exceeded', 'slow_down', 'maintenance']);

/** SQLSTATEs of a transaction the server gave up so another could go on (serialization failure, deadlock). */
const RETRY_STATES: ReadonlySet<string> = new Set(['40001', '40P01']);

/** How far down `cause` to look: an error wrapped by a handler still says what happened beneath. */
const MAX_CAUSE_DEPTH = 5;

/**
 * Whether an error says only that something was briefly down or busy, so the same work will pass once it is back:
 * what an event consumer retries for ever rather than setting the event aside (outbox/consume.ts). Looks through
 * `cause`s. A bare gRPC RESOURCE_EXHAUSTED is the transport's message size limit, which no retry changes (codes.ts):
 * not transient. Everything else (a bug, a constraint violation, a value refused) is not.
 */
export function isTransientFailure(error: unknown): boolean {
  let current = error;
  for (let depth = 0; isError(current) && depth < MAX_CAUSE_DEPTH; depth += 1) {
    if (current instanceof AppError ? TRANSIENT_CODES.has(current.code) : transientBelowAppError(current)) return true;
    current = current.cause;
  }
  return false;
}

/** A driver's or a transport's own error: a lost or refused connection, a retryable SQLSTATE, a gRPC status. */
function transientBelowAppError(error: Error): boolean {
  const state = sqlStateOf(error);
  if (state !== undefined && RETRY_STATES.has(state)) return true;
  if (unavailableOr(error) instanceof DatabaseUnavailableError) return true;
  const { code, metadata } = error as { code?: unknown; metadata?: unknown };
  return typeof code === 'number' && metadata !== undefined && TRANSIENT_CODES.has(codeForGrpcStatus(code));
}
