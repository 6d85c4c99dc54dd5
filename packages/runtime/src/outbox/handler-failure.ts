import { sqlStateOf } from '../db/sql-state';
import { AppError } from '../errors/app-error';
import { isError } from '../errors/is-error';

/** The longest error message a parked event keeps (its handler's message may quote the payload: the row holds that too). */
const MESSAGE_LIMIT = 500;

/**
 * The class of what a handler threw, the only thing about it that goes into logs, with the code that says more where
 * it has one: `TypeError`, `AppError conflict`, `DatabaseError 23505`. A statement's error is `DatabaseError` with its
 * SQLSTATE whichever driver raised it (pg's says `error` for its name, PGlite's constructor name is minified).
 */
export function errorClassOf(error: unknown): string {
  if (!isError(error)) return typeof error;
  const state = sqlStateOf(error);
  if (state !== undefined) return `DatabaseError ${state}`;
  const constructorName = (error.constructor as { name?: unknown } | undefined)?.name;
  const name = typeof constructorName === 'string' && constructorName !== '' && constructorName !== 'Error' ? constructorName : error.name || 'Error';
  return error instanceof AppError ? `${name} ${error.code}` : name;
}

/**
 * What a handler threw, in words, for the parked row only (never a log line): its message, or the value thrown, cut
 * to MESSAGE_LIMIT characters and without NULs, which PostgreSQL text cannot hold.
 */
export function errorMessageOf(error: unknown): string {
  const text = (isError(error) ? error.message : String(error)).replaceAll('\u0000', '');
  return text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text;
}

/**
 * What a consumer hands the bus, to log and retry, for a handler's failure that is not a dependency down: the event,
 * the error's class and where it was thrown, never its message, which may quote the payload (a parser quoting its
 * input, a value in a message of our own). The message is kept with the event if it is parked.
 */
export class EventHandlerFailedError extends Error {
  readonly errorClass: string;

  constructor(
    readonly eventId: string,
    error: unknown,
    readonly attempts: number,
    parkAfter: number,
  ) {
    const errorClass = errorClassOf(error);
    super(`the handler of event ${eventId} failed with ${errorClass} (${attempts} of ${parkAfter} attempts before it is parked)`);
    this.name = 'EventHandlerFailedError';
    this.errorClass = errorClass;
    this.stack = [`${this.name}: ${this.message}`, ...framesOf(error)].join('\n');
  }
}

/**
 * The frames of an error's stack ("    at …"), where the handler failed, without the message the stack starts with
 * (a message whose lines look like frames included). None when the stack does not hold the message where expected.
 */
function framesOf(error: unknown): string[] {
  if (!isError(error) || typeof error.stack !== 'string') return [];
  const start = error.message === '' ? 0 : error.stack.indexOf(error.message);
  if (start < 0) return [];
  return error.stack
    .slice(start + error.message.length)
    .split('\n')
    .filter((line) => /^\s+at /.test(line));
}
