import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type ChannelOptions,
  type handleUnaryCall,
  type Metadata,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { AppError } from '../errors/app-error';
import { LogThrottle } from '../logging/log-throttle';
import { withLogContext, type Logger } from '../logging/logger';
import { grpcServerDuration } from '../telemetry/metrics';
import { extractTraceContext, SpanKind, withSpan } from '../telemetry/tracing';
import { SpanStatusCode } from '@opentelemetry/api';
import { generationsMovedTrailer } from './generations-moved';
import { appErrorToStatus, statusName } from './errors';
import { HealthRegistry, OVERALL_HEALTH } from './health';
import { LocalChannel, MAX_MESSAGE_BYTES, type LocalCallInFlight, type LocalMethod } from './local-channel';
import { serviceNameOf, splitMethodPath } from './method-path';
import type { AsyncImplementationFor, AsyncUnaryHandler, GrpcCallContext } from './types';

export interface GrpcServerOptions {
  host: string;
  /** 0 picks a free port; `start()` returns the one bound. */
  port: number;
  logger: Logger;
  channelOptions?: ChannelOptions;
}

/**
 * Clients keep one connection to a service address, and a Kubernetes Service balances connections, not calls: a
 * connection that lived for ever would keep each client on the replica it first reached, and replicas added later
 * (a rollout, the autoscaler) would get no calls from it. So a connection is told to go (GOAWAY) after about five
 * minutes (grpc-js adds up to 10 % of jitter) and the client's next calls open a new one, which the Service may send
 * to any replica. Calls still running on the old one may finish for an hour, longer than any deadline the platform
 * sets (a refresh's is about 50 minutes); a stopping server ends them sooner anyway.
 */
export const MAX_CONNECTION_AGE_MS = 5 * 60 * 1000;
export const MAX_CONNECTION_AGE_GRACE_MS = 60 * 60 * 1000;

/** A typed implementation for a generated definition; an untyped definition can only be checked at runtime. */
type ImplementationOf<D> = string extends keyof D ? object : AsyncImplementationFor<D>;

/** Statuses that mean the server failed (a span error), as opposed to the caller asking for something wrong. */
const SERVER_FAULTS = new Set<number>([GrpcStatus.INTERNAL, GrpcStatus.UNKNOWN, GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED, GrpcStatus.DATA_LOSS]);

/**
 * A grpc-js server whose services are async unary handlers. Every call gets a SERVER span continuing the
 * caller's trace, the caller's `x-request-id` in the log context, a duration metric, and errors mapped to
 * gRPC status (AppError as is; anything else as a generic `internal`, logged here and never sent).
 * grpc.health.v1 is served alongside. `localChannel()` reaches the same services from this process without a
 * socket (local-channel.ts).
 */
export class GrpcServer {
  private readonly server: Server;
  private readonly health = new HealthRegistry();
  private readonly logger: Logger;
  /** The wrapped handlers by method path, for calls through `localChannel()`. */
  private readonly localMethods = new Map<string, LocalMethod>();
  private readonly localCalls = new Set<LocalCallInFlight>();
  /** A dependency's outage fails every call that needs it: its cause is logged now and then, not per call. */
  private readonly outageWarnings = new LogThrottle(10_000);
  private stopping = false;

  constructor(private readonly options: GrpcServerOptions) {
    this.logger = options.logger;
    this.server = new Server({
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_connection_age_ms': MAX_CONNECTION_AGE_MS,
      'grpc.max_connection_age_grace_ms': MAX_CONNECTION_AGE_GRACE_MS,
      ...options.channelOptions,
    });
    this.health.addTo(this.server);
  }

  /** Registers a service and reports it SERVING (change that with `setServing`). */
  addService<D extends ServiceDefinition>(definition: D, implementation: ImplementationOf<D>): void {
    const handlers = implementation as Record<string, AsyncUnaryHandler<unknown, unknown> | undefined>;
    const wrapped: UntypedServiceImplementation = {};
    for (const [key, method] of Object.entries(definition)) {
      const handler = handlers[key];
      const { service, method: name } = splitMethodPath(method.path);
      if (method.requestStream || method.responseStream) throw new Error(`${service}/${name} is a streaming method; GrpcServer serves unary methods only`);
      if (typeof handler !== 'function') throw new Error(`No handler for ${service}/${name} (expected implementation.${key})`);
      wrapped[key] = this.wrap(service, name, handler.bind(implementation));
      this.localMethods.set(method.path, {
        requestDeserialize: method.requestDeserialize,
        responseSerialize: method.responseSerialize,
        handler: wrapped[key] as LocalMethod['handler'],
      });
    }
    this.server.addService(definition, wrapped);
    this.health.setServing(serviceNameOf(definition), true);
  }

  /**
   * Sets the grpc.health.v1 status of a service by its full name (`''` is the whole server). Once `stop` began, the
   * server stays NOT_SERVING whatever is asked.
   */
  setServing(serviceName: string, serving: boolean): void {
    if (this.stopping) return;
    this.health.setServing(serviceName, serving);
  }

  /**
   * Sets every service of this server, and the server as a whole, SERVING or NOT_SERVING: what the process's
   * dependency checks decide (readiness-health.ts). Ignored once `stop` began.
   */
  setAllServing(serving: boolean): void {
    if (this.stopping) return;
    this.health.setAll(serving);
  }

  /**
   * A channel to this server's services for clients in the same process: the same handlers, messages and
   * statuses as over the wire, without HTTP/2 and a socket (docs/architecture.md, One process).
   */
  localChannel(): LocalChannel {
    return new LocalChannel({
      method: (path) => this.localMethods.get(path),
      accepting: () => !this.stopping,
      track: (call) => {
        this.localCalls.add(call);
        void call.done.then(() => this.localCalls.delete(call));
      },
    });
  }

  /** Binds and starts serving; resolves to the bound port. */
  start(): Promise<number> {
    const host = this.options.host.includes(':') && !this.options.host.startsWith('[') ? `[${this.options.host}]` : this.options.host;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`${host}:${this.options.port}`, ServerCredentials.createInsecure(), (error, port) => {
        if (error) return reject(error);
        this.health.setServing(OVERALL_HEALTH, true);
        resolve(port);
      });
    });
  }

  /**
   * Reports NOT_SERVING, lets in-flight calls (off the wire and through local channels) finish, and cuts off
   * whatever is still running after `graceMs`.
   */
  stop(graceMs: number): Promise<void> {
    this.health.setAll(false);
    this.stopping = true;
    const drained = Promise.all([
      new Promise<void>((resolve) => this.server.tryShutdown(() => resolve())),
      ...[...this.localCalls].map((call) => call.done),
    ]);
    return new Promise((resolve) => {
      const force = setTimeout(() => {
        this.logger.warn({ graceMs }, 'gRPC calls still running after the grace period; forcing shutdown');
        this.server.forceShutdown();
        for (const call of this.localCalls) call.cutOff();
        resolve();
      }, graceMs);
      force.unref();
      void drained.then(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  private wrap(service: string, method: string, handler: AsyncUnaryHandler<unknown, unknown>): handleUnaryCall<unknown, unknown> {
    return (call, callback) => {
      const started = process.hrtime.bigint();
      const requestId = firstString(call.metadata, 'x-request-id');
      const parent = extractTraceContext({ traceparent: firstString(call.metadata, 'traceparent'), tracestate: firstString(call.metadata, 'tracestate') });
      const attributes = { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method };
      const trailer = generationsMovedTrailer();

      const serve = () =>
        withSpan(`${service}/${method}`, { kind: SpanKind.SERVER, parent, attributes }, async (span) => {
          let result: { response: unknown } | { error: AppError };
          try {
            result = { response: await this.invoke(call, handler, service, method, requestId) };
          } catch (thrown) {
            const error = AppError.from(thrown);
            if (call.cancelled) {
              // The caller gave up (deadline or cancel); what the handler threw on its way out is expected.
              this.logger.debug({ service, method, code: error.code }, 'gRPC call ended after the caller went away');
            } else if (error.code === 'internal') {
              // The caller only ever sees "Internal error"; the detail is for operators.
              this.logger.error({ err: thrown instanceof AppError ? (thrown.cause ?? thrown) : thrown, service, method }, 'gRPC handler failed');
            } else if (error.code === 'unavailable' && thrown instanceof AppError && thrown.cause !== undefined) {
              // The caller sees "unavailable"; what was (the database's or the cache's own error) is for operators.
              this.outageWarnings.warn(this.logger, { err: thrown.cause, service, method }, 'gRPC handler met a dependency outage');
            }
            result = { error };
          }
          const code = 'error' in result ? result.error.grpcStatus : GrpcStatus.OK;
          span.setAttribute('rpc.grpc.status_code', code);
          if (SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: statusName(code) });
          return result;
        });

      void withLogContext(requestId ? { requestId } : {}, serve).then((result) => {
        const code = 'error' in result ? result.error.grpcStatus : GrpcStatus.OK;
        grpcServerDuration.observe({ service, method, code: statusName(code) }, Number(process.hrtime.bigint() - started) / 1e9);
        const moved = trailer();
        if ('error' in result) {
          const status = appErrorToStatus(result.error);
          if (moved) status.metadata!.merge(moved);
          callback(status);
        } else {
          callback(null, result.response, moved);
        }
      });
    };
  }

  private async invoke(
    call: ServerUnaryCall<unknown, unknown>,
    handler: AsyncUnaryHandler<unknown, unknown>,
    service: string,
    method: string,
    requestId: string | undefined,
  ): Promise<unknown> {
    const deadline = deadlineOf(call);
    // A call whose caller has already given up is not worth starting.
    if (deadline && deadline.getTime() <= Date.now()) throw new AppError('deadline_exceeded', 'The deadline passed before the call started');
    // grpc-js reports every call's stream closing as 'cancelled', after a normal answer too: the listener goes once the
    // handler is done, and the AbortController (whose abort builds a DOMException) is made only for a handler that
    // asks for the signal.
    let abort: AbortController | undefined;
    let cancelled = false;
    const onCancelled = () => {
      cancelled = true;
      abort?.abort();
    };
    call.once('cancelled', onCancelled);
    const context: GrpcCallContext = {
      service,
      method,
      metadata: call.metadata,
      requestId,
      deadline,
      logger: this.logger,
      get signal() {
        abort ??= new AbortController();
        if (cancelled) abort.abort();
        return abort.signal;
      },
    };
    try {
      return await handler(call.request, context);
    } finally {
      call.off('cancelled', onCancelled);
    }
  }
}

function deadlineOf(call: ServerUnaryCall<unknown, unknown>): Date | undefined {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

function firstString(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
