import type { CallOptions, Client, handleUnaryCall, Metadata, ServiceError } from '@grpc/grpc-js';
import type { Logger } from '../logging/logger';

/** What a handler learns about the call it serves, besides the request message. */
export interface GrpcCallContext {
  /** Fully qualified service name, for example `platform.identity.v1.IdentityService`. */
  service: string;
  /** RPC name as declared in the proto, for example `GetServiceStatus`. */
  method: string;
  metadata: Metadata;
  /** The caller's `x-request-id`, also present in the log context. */
  requestId: string | undefined;
  /** When the caller stops waiting; undefined when it set no deadline. */
  deadline: Date | undefined;
  /** Aborted when the caller cancels or the deadline passes, so long work can stop early. */
  signal: AbortSignal;
  logger: Logger;
}

export type AsyncUnaryHandler<Req, Res> = (request: Req, context: GrpcCallContext) => Promise<Res>;

/** Names of an interface's declared members, leaving out index signatures (grpc's Untyped* types have one). */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * Async handlers for a ts-proto generated `XServiceServer` interface:
 * `const impl: AsyncServiceImplementation<IdentityServiceServer> = { getServiceStatus: async (req, ctx) => ... }`.
 * Unary methods only; a streaming method maps to `never` and so cannot be implemented through GrpcServer.
 */
export type AsyncServiceImplementation<S> = {
  [K in KnownKeys<S>]: S[K] extends handleUnaryCall<infer Req, infer Res> ? AsyncUnaryHandler<Req, Res> : never;
};

/** The same handlers, derived from a generated service definition (`IdentityServiceService`). */
export type AsyncImplementationFor<D> = {
  [K in keyof D]: D[K] extends {
    requestStream: false;
    responseStream: false;
    requestDeserialize: (bytes: Buffer) => infer Req;
    responseSerialize: (value: infer Res) => Buffer;
  }
    ? AsyncUnaryHandler<Req, Res>
    : never;
};

/** Per-call overrides for a client call. */
export interface GrpcCallOptions {
  /** Deadline for this call, replacing the client's default. */
  deadlineMs?: number;
}

/** Method names of a ts-proto generated client (`IdentityServiceClient`), without grpc's `Client` members. */
export type ClientMethodName<C> = Exclude<keyof C, keyof Client> & string;

/**
 * Promise-based view of a generated client: `await client.getServiceStatus({})`. Failures reject with an AppError.
 * Types come from the generated 4-argument overload (request, metadata, options, callback).
 */
export type AsyncClient<C> = {
  [K in ClientMethodName<C>]: C[K] extends (
    request: infer Req,
    metadata: Metadata,
    options: Partial<CallOptions>,
    callback: (error: ServiceError | null, response: infer Res) => void,
  ) => unknown
    ? (request: Req, options?: GrpcCallOptions) => Promise<Res>
    : never;
} & {
  /** Closes the channel; calls made afterwards fail. */
  close(): void;
};
