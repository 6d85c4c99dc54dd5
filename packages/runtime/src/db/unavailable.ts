import { isError } from '../errors/is-error';
import { DatabaseUnavailableError } from './errors';
import { sqlStateOf } from './sql-state';

/**
 * SQLSTATEs that say the server cannot run statements now rather than that a statement is wrong: class 08
 * (connection exception) but 08P01 (protocol violation: a statement sent with the wrong number of parameters, a bug),
 * 57P01-57P03 (shutting down, cannot connect now), 53300 (too many connections) and 57014 (cancelled:
 * statement_timeout).
 */
function unavailableState(code: string): boolean {
  return (code.startsWith('08') && code !== '08P01') || code.startsWith('57P') || code === '53300' || code === '57014';
}

/**
 * The driver's own failures short of the server: `pg` and `pg-pool` raise plain Errors with these messages for a
 * connection lost or refused mid-way, no pooled connection in time, and no answer in time (`query_timeout`).
 */
const DRIVER_UNAVAILABLE = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout)|is not queryable$/;

/** `error` as a DatabaseUnavailableError when it says the database cannot be reached or answer now; else as it is. */
export function unavailableOr(error: unknown): unknown {
  if (!isError(error) || error instanceof DatabaseUnavailableError) return error;
  const state = sqlStateOf(error);
  const { syscall } = error as { syscall?: unknown };
  const unavailable =
    state !== undefined
      ? unavailableState(state)
      : typeof syscall === 'string' || DRIVER_UNAVAILABLE.test(error.message); // a socket's own failure (ECONNREFUSED, EPIPE…)
  return unavailable ? new DatabaseUnavailableError(error) : error;
}
