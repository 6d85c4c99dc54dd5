import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AppError, type FieldError } from '../errors/app-error';
import { codeForGrpcStatus, ERROR_CODES, isErrorCode, type ErrorCode } from '../errors/codes';

/**
 * The one place where AppError crosses gRPC, in both directions. The status code comes from ERROR_CODES;
 * the platform code, field problems and edge headers travel as trailing metadata so the caller rebuilds the
 * same AppError the handler threw.
 */
export const ERROR_CODE_KEY = 'x-error-code';
export const ERROR_FIELDS_KEY = 'x-error-fields';
export const ERROR_HEADERS_KEY = 'x-error-headers';

/** gRPC status sent for an AppError (server side). */
export function appErrorToStatus(error: AppError): Partial<StatusObject> {
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_KEY, error.code);
  if (error.fields && error.fields.length > 0) metadata.set(ERROR_FIELDS_KEY, asciiJson(error.fields));
  if (error.headers && Object.keys(error.headers).length > 0) metadata.set(ERROR_HEADERS_KEY, asciiJson(error.headers));
  return { code: ERROR_CODES[error.code].grpc, details: error.message, metadata };
}

/** AppError for a failed call (client side): the sender's AppError when it sent one, else one from the status. */
export function statusToAppError(error: ServiceError): AppError {
  const code = firstString(error.metadata, ERROR_CODE_KEY);
  if (isErrorCode(code)) {
    const fields = parseJson(firstString(error.metadata, ERROR_FIELDS_KEY), isFieldErrors);
    const headers = parseJson(firstString(error.metadata, ERROR_HEADERS_KEY), isStringRecord);
    return new AppError(code, error.details, { ...(fields ? { fields } : {}), ...(headers ? { headers } : {}) });
  }
  // A transport failure or a status from something that is not our server: its details may name hosts and
  // ports, so they stay in `cause` (logged, never sent on to a caller).
  const mapped = codeForGrpcStatus(error.code);
  return new AppError(mapped, TRANSPORT_MESSAGES[mapped] ?? 'Internal error', { cause: error });
}

/** The gRPC status name for metrics labels, for example `FAILED_PRECONDITION`. */
export function statusName(code: number): string {
  return GrpcStatus[code] ?? String(code);
}

const TRANSPORT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  unavailable: 'Service unavailable',
  deadline_exceeded: 'The service did not answer in time',
  unauthenticated: 'Authentication required',
  forbidden: 'You are not allowed to do this',
  not_found: 'Not found',
  invalid_request: 'Invalid request',
  slow_down: 'Too many requests',
};

/** JSON with non-ASCII characters escaped: gRPC text metadata values must be printable ASCII. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function firstString(metadata: Metadata | undefined, key: string): string | undefined {
  const value = metadata?.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

function parseJson<T>(text: string | undefined, guard: (value: unknown) => value is T): T | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return guard(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isFieldErrors(value: unknown): value is FieldError[] {
  return (
    Array.isArray(value) &&
    value.every((f) => typeof f === 'object' && f !== null && typeof f.field === 'string' && typeof f.problem === 'string')
  );
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}
