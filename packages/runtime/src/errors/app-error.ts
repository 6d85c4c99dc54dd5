import { ERROR_CODES, type ErrorCode } from './codes';

/** A problem with one field of a request, named by its JSON path (for example `servers.0.prefix`). */
export interface FieldError {
  field: string;
  problem: string;
}

export interface AppErrorOptions {
  /** Field-level problems; rendered as `error.fields` at the edge. */
  fields?: FieldError[];
  /** Extra response headers the edge must send (for example `Retry-After`). Never secrets. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The platform's one error type. Its message is written for the API caller: it must never carry a secret,
 * a token, SQL or a stack trace. Internal detail belongs in `cause`, which is logged but never sent.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.fields = options.fields;
    this.headers = options.headers;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get grpcStatus(): number {
    return ERROR_CODES[this.code].grpc;
  }

  static invalid(message: string, fields?: FieldError[]): AppError {
    return new AppError('invalid_request', message, fields ? { fields } : {});
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }

  static forbidden(message = 'You are not allowed to do this'): AppError {
    return new AppError('forbidden', message);
  }

  static unauthenticated(message = 'Authentication required'): AppError {
    return new AppError('unauthenticated', message);
  }

  static conflict(message: string): AppError {
    return new AppError('conflict', message);
  }

  /** Wraps anything thrown into an AppError; unknown errors become `internal` with a generic message. */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error;
    return new AppError('internal', 'Internal error', { cause: error });
  }
}
