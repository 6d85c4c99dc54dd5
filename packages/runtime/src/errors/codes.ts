import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The one catalogue of error codes. Each code is mapped here, once, to its HTTP status and its gRPC status;
 * the edge and the gRPC helpers read this table and nothing else.
 */
export const ERROR_CODES = {
  // Generic request problems.
  invalid_request: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  unauthenticated: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  csrf_failed: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  conflict: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
  precondition_failed: { http: 412, grpc: GrpcStatus.FAILED_PRECONDITION },
  payload_too_large: { http: 413, grpc: GrpcStatus.INVALID_ARGUMENT },
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  precondition_required: { http: 428, grpc: GrpcStatus.FAILED_PRECONDITION },
  slow_down: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  internal: { http: 500, grpc: GrpcStatus.INTERNAL },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  maintenance: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  deadline_exceeded: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED },

  // Domain codes named by the specification (§7).
  agent_disabled_by_platform: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  approval_required: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  call_not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  invalid_error_code: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  team_mcp_visibility: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  invalid_state: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  in_use: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  not_changed: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  capability_gone: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  not_signed: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  team_archived: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  address_not_allowed: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT },
  // Gateway composition: two of a gateway's servers would expose the same name (docs/catalog.md, Gateways).
  name_collision: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS },
} as const satisfies Record<string, { http: number; grpc: GrpcStatus }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/**
 * The code used when only a gRPC status is known (for example a transport failure). A bare RESOURCE_EXHAUSTED is
 * the transport refusing a message over the size limit, which no retry will change: `internal`, not `slow_down`
 * (the platform's own rate limits travel as AppErrors with their code and Retry-After).
 */
export function codeForGrpcStatus(status: GrpcStatus): ErrorCode {
  switch (status) {
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.OUT_OF_RANGE:
      return 'invalid_request';
    case GrpcStatus.UNAUTHENTICATED:
      return 'unauthenticated';
    case GrpcStatus.PERMISSION_DENIED:
      return 'forbidden';
    case GrpcStatus.NOT_FOUND:
      return 'not_found';
    case GrpcStatus.ALREADY_EXISTS:
    case GrpcStatus.ABORTED:
      return 'conflict';
    case GrpcStatus.FAILED_PRECONDITION:
      return 'precondition_failed';
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.CANCELLED:
      return 'unavailable';
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 'deadline_exceeded';
    default:
      return 'internal';
  }
}
