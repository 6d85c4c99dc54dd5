import { AppError, type ErrorCode } from '@platform/runtime';

/** Errors raised by express and body-parser carry an HTTP status and a `type`; these are the ones we expect. */
interface HttpLikeError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  expose?: unknown;
}

const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Fixed, caller-safe messages: the original messages of library errors are never sent. */
const MESSAGE_FOR_CODE: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'The request is malformed',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  payload_too_large: 'The request body is too large',
  unsupported_media_type: 'Unsupported content type',
};

/**
 * Turns anything thrown into an AppError: AppErrors as they are, client errors raised by express or
 * body-parser into their matching code, and everything else into `internal` with a generic message.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error !== null && typeof error === 'object') {
    const http = error as HttpLikeError;
    if (http.type === 'entity.parse.failed') {
      return new AppError('invalid_request', 'The request body is not valid JSON', { cause: error });
    }
    const status = typeof http.status === 'number' ? http.status : typeof http.statusCode === 'number' ? http.statusCode : undefined;
    const code = status !== undefined ? CODE_FOR_STATUS[status] : undefined;
    if (code) return new AppError(code, MESSAGE_FOR_CODE[code] ?? 'The request was refused', { cause: error });
  }
  return AppError.from(error);
}
