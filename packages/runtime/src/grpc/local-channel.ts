import { EventEmitter } from 'node:events';
import { Metadata, status as GrpcStatus, type Deadline, type handleUnaryCall, type ServerUnaryCall, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { statusName } from './errors';

/**
 * What a client needs of a channel to make unary calls: grpc-js's `Client` has this method, and so does
 * `LocalChannel`, which reaches a server in the same process without a socket.
 */
export interface UnaryChannel {
  makeUnaryRequest<Req, Res>(
    path: string,
    serialize: (value: Req) => Buffer,
    deserialize: (bytes: Buffer) => Res,
    request: Req,
    metadata: Metadata,
    options: { deadline: Deadline },
    callback: (error: ServiceError | null, response?: Res) => void,
  ): CallStatusEvents;
  close(): void;
}

/** A call's 'status' event (grpc-js's `ClientUnaryCall` has it): the final status, with trailing metadata, after the callback. */
export interface CallStatusEvents {
  on(event: 'status', listener: (status: StatusObject) => void): unknown;
}

/** A method as the server registered it: how its messages are read and written, and its wrapped handler. */
export interface LocalMethod {
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
  handler: handleUnaryCall<unknown, unknown>;
}

/** What `LocalChannel` needs of the server it calls. */
export interface LocalServer {
  method(path: string): LocalMethod | undefined;
  /** False once the server stops taking calls; in-flight ones are awaited by its stop. */
  accepting(): boolean;
  /** A call in flight: `done` settles when its handler has answered; `cutOff` ends it when the server's grace runs out. */
  track(call: LocalCallInFlight): void;
}

export interface LocalCallInFlight {
  done: Promise<void>;
  cutOff(): void;
}

/**
 * The largest message the platform's services send one another, on either channel (grpc-js's default is 4 MiB for a
 * received one). A gateway's runtime carries every exposed capability's definition of up to 50 servers, and one
 * server's may reach what the catalog reads from it (16 MiB, docs/catalog.md): 4 MiB was reachable by real gateways.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * A unary call to a service hosted in this process, without HTTP/2 or a socket. It keeps everything that makes
 * it a gRPC call: the request and the answer are serialised to protobuf and read back on the other side (neither
 * side shares the other's objects), the metadata is copied, the deadline is enforced (the handler sees the call
 * cancelled and the caller gets DEADLINE_EXCEEDED), the server's handler wrapper (span, log context, metric,
 * error mapping) runs as for a call off the wire, and errors come back as gRPC statuses with their trailing
 * metadata. On loopback grpc-js spends about 0.25 ms of CPU per call on framing and sockets (docs/performance.md).
 */
export class LocalChannel implements UnaryChannel {
  private closed = false;

  constructor(private readonly server: LocalServer) {}

  readonly makeUnaryRequest: UnaryChannel['makeUnaryRequest'] = (path, serialize, deserialize, request, metadata, options, callback) => {
    const events = new EventEmitter();
    // As grpc-js does: the callback first, then the status with its trailing metadata.
    const finish = (status: StatusObject, response?: ReturnType<typeof deserialize>) => {
      callback(status.code === GrpcStatus.OK ? null : serviceError(status.code, status.details, status.metadata), response);
      events.emit('status', status);
    };
    // Asynchronously, as a call on the wire would answer.
    const fail = (code: number, details: string) => {
      process.nextTick(finish, { code, details, metadata: new Metadata() });
      return events;
    };
    const method = this.server.method(path);
    if (this.closed) return fail(GrpcStatus.CANCELLED, 'Channel has been shut down');
    if (!method) return fail(GrpcStatus.UNIMPLEMENTED, `The server does not implement the method ${path}`);
    if (!this.server.accepting()) return fail(GrpcStatus.UNAVAILABLE, 'The server is shutting down');

    let received: unknown;
    try {
      const bytes = serialize(request);
      if (bytes.length > MAX_MESSAGE_BYTES) return fail(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${bytes.length} vs. ${MAX_MESSAGE_BYTES})`);
      received = method.requestDeserialize(bytes);
    } catch {
      return fail(GrpcStatus.INTERNAL, 'Request message serialization failure');
    }

    const deadline = deadlineMs(options.deadline);
    const call = new LocalUnaryCall(received, metadata.clone(), deadline);
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    const answer = (code: number, details: string, trailer?: Metadata, response?: ReturnType<typeof deserialize>) => {
      if (answered) return;
      answered = true;
      if (timer) clearTimeout(timer);
      finish({ code, details, metadata: trailer?.clone() ?? new Metadata() }, response);
    };
    let settle!: () => void;
    this.server.track({
      done: new Promise<void>((resolve) => (settle = resolve)),
      // As grpc-js's forced shutdown does: the handler sees the call cancelled, the caller gets CANCELLED.
      cutOff: () => {
        call.cancel();
        answer(GrpcStatus.CANCELLED, 'Call cancelled');
      },
    });
    if (Number.isFinite(deadline)) {
      timer = setTimeout(() => {
        call.cancel();
        answer(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
      }, Math.max(0, deadline - Date.now()));
    }

    method.handler(call as unknown as ServerUnaryCall<unknown, unknown>, (error, value, trailer) => {
      settle();
      if (error) return answer(error.code ?? GrpcStatus.UNKNOWN, error.details ?? '', error.metadata ?? undefined);
      let bytes: Buffer;
      try {
        bytes = method.responseSerialize(value);
      } catch {
        return answer(GrpcStatus.INTERNAL, 'Response message serialization failure');
      }
      if (bytes.length > MAX_MESSAGE_BYTES) return answer(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs. ${MAX_MESSAGE_BYTES})`);
      let response: ReturnType<typeof deserialize>;
      try {
        response = deserialize(bytes);
      } catch {
        return answer(GrpcStatus.INTERNAL, 'Response message parsing error');
      }
      answer(GrpcStatus.OK, 'OK', trailer ?? undefined, response);
    });
    return events;
  };

  close(): void {
    this.closed = true;
  }
}

/** The part of grpc-js's ServerUnaryCall that GrpcServer's handler wrapper uses. */
class LocalUnaryCall extends EventEmitter {
  cancelled = false;

  constructor(
    readonly request: unknown,
    readonly metadata: Metadata,
    private readonly deadline: number,
  ) {
    super();
  }

  getDeadline(): Deadline {
    return this.deadline;
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled', 'deadline');
  }
}

function deadlineMs(deadline: Deadline): number {
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/** An error shaped as grpc-js reports a failed call. */
function serviceError(code: number, details: string, metadata: Metadata = new Metadata()): ServiceError {
  const status: StatusObject = { code, details, metadata };
  return Object.assign(new Error(`${code} ${statusName(code)}: ${details}`), status);
}
