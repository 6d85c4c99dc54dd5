import {
  credentials,
  Metadata,
  status as GrpcStatus,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientOptions,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors/app-error';
import { currentLogContext, type Logger } from '../logging/logger';
import { grpcClientDuration } from '../telemetry/metrics';
import { injectTraceHeaders, SpanKind, withSpan } from '../telemetry/tracing';
import { noteGenerationsMoved } from './generations-moved';
import { ERROR_CODE_KEY, statusName, statusToAppError } from './errors';
import { splitMethodPath } from './method-path';
import { MAX_MESSAGE_BYTES, type UnaryChannel } from './local-channel';
import type { AsyncClient, ClientMethodName, GrpcCallOptions } from './types';

/** A ts-proto generated client class (`IdentityServiceClient`). */
export interface GeneratedClientConstructor<C extends Client> {
  new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): C;
  service: ServiceDefinition;
}

export interface GrpcClientOptions<C> {
  /** Deadline of every call unless the call sets its own. */
  deadlineMs: number;
  /**
   * Methods (client method names, e.g. `getServiceStatus`) that are safe to repeat: reads, and writes keyed by
   * an id the caller chose. Only these are retried, and only after UNAVAILABLE.
   */
  idempotentMethods?: ReadonlyArray<ClientMethodName<C>>;
  logger?: Logger;
  /** Attempts in all for an idempotent call (default 5), all within the call's one deadline. */
  maxAttempts?: number;
  channelOptions?: ChannelOptions;
}

/**
 * Reconnect quickly after a refused connection (grpc-js waits 1 s by default, then longer): a service that
 * restarts or starts after its caller becomes reachable within a retry or two.
 */
const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 5_000,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
};

const RETRY_BASE_DELAY_MS = 50;
const RETRY_MAX_DELAY_MS = 1_000;

/**
 * A promise-based client for a generated service. Every call has a deadline, carries `traceparent` and the
 * current `x-request-id`, gets a CLIENT span and a duration metric, and fails with the AppError the server
 * threw (or one mapped from the transport status). `target` is a `host:port`, or the `localChannel()` of a
 * GrpcServer in this process.
 */
export function createGrpcClient<C extends Client>(
  ClientConstructor: GeneratedClientConstructor<C>,
  target: string | UnaryChannel,
  options: GrpcClientOptions<C>,
): AsyncClient<C> {
  const client: UnaryChannel =
    typeof target === 'string' ? new ClientConstructor(target, credentials.createInsecure(), { ...DEFAULT_CHANNEL_OPTIONS, ...options.channelOptions }) : target;
  const server = typeof target === 'string' ? serverAttributes(target) : { 'server.address': 'in-process' };
  const idempotent = new Set<string>(options.idempotentMethods ?? []);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const methods: Record<string, unknown> = {};

  for (const [key, definition] of Object.entries(ClientConstructor.service)) {
    const { service, method } = splitMethodPath(definition.path);
    const callOnce = (request: unknown, deadline: number) =>
      new Promise<unknown>((resolve, reject) => {
        const metadata = new Metadata();
        for (const [name, value] of Object.entries(injectTraceHeaders())) metadata.set(name, value);
        const requestId = currentLogContext()?.requestId;
        if (requestId) metadata.set('x-request-id', requestId);
        client
          .makeUnaryRequest(
            definition.path,
            definition.requestSerialize,
            definition.responseDeserialize,
            request,
            metadata,
            { deadline },
            (error: ServiceError | null, response?: unknown) => (error ? reject(error) : resolve(response)),
          )
          // Synchronously after the callback, before the caller's continuation runs.
          .on('status', noteGenerationsMoved);
      });

    methods[key] = async (request: unknown, callOptions: GrpcCallOptions = {}) => {
      const started = process.hrtime.bigint();
      const deadline = Date.now() + (callOptions.deadlineMs ?? options.deadlineMs);
      let code: number = GrpcStatus.OK;
      try {
        return await withSpan(
          `${service}/${method}`,
          { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method, ...server } },
          async (span) => {
            for (let attempt = 1; ; attempt++) {
              try {
                const response = await callOnce(request, deadline);
                span.setAttribute('rpc.grpc.status_code', GrpcStatus.OK);
                return response;
              } catch (thrown) {
                if (!isServiceError(thrown)) throw thrown;
                const error = thrown;
                const delayMs = retryDelay(attempt);
                const retry =
                  idempotent.has(key) && isRetryable(error) && attempt < maxAttempts && Date.now() + delayMs < deadline;
                if (!retry) {
                  code = error.code;
                  span.setAttribute('rpc.grpc.status_code', error.code);
                  throw statusToAppError(error);
                }
                options.logger?.debug({ service, method, attempt, delayMs }, 'gRPC call unavailable; retrying');
                await sleep(delayMs);
              }
            }
          },
        );
      } catch (error) {
        if (code === GrpcStatus.OK) code = GrpcStatus.INTERNAL;
        throw error instanceof AppError ? error : AppError.from(error);
      } finally {
        grpcClientDuration.observe({ service, method, code: statusName(code) }, Number(process.hrtime.bigint() - started) / 1e9);
      }
    };
  }

  methods.close = () => client.close();
  return methods as AsyncClient<C>;
}

/**
 * A `host:port` target as the semantic conventions' `server.address` (the host alone, IPv6 without brackets) and
 * `server.port`; a target of another form is the address as it is.
 */
function serverAttributes(target: string): Record<string, string | number> {
  const hostPort = /^(?:dns:\/{0,3})?(\[[^\]]+\]|[^:/[\]]+):(\d+)$/.exec(target);
  if (!hostPort) return { 'server.address': target };
  return { 'server.address': hostPort[1]!.replace(/^\[|\]$/g, ''), 'server.port': Number(hostPort[2]) };
}

/**
 * UNAVAILABLE means the call did not run (no connection) or the service could not serve it right now. A
 * `maintenance` refusal is deliberate and will not clear within a deadline, so it is not retried.
 */
function isRetryable(error: ServiceError): boolean {
  return error.code === GrpcStatus.UNAVAILABLE && error.metadata?.get(ERROR_CODE_KEY)[0] !== 'maintenance';
}

/** Exponential back-off with jitter (50–100 % of the step), so callers that failed together do not retry together. */
function retryDelay(attempt: number): number {
  const step = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (attempt - 1));
  return Math.round(step * (0.5 + Math.random() * 0.5));
}

function isServiceError(value: unknown): value is ServiceError {
  return value instanceof Error && typeof (value as Partial<ServiceError>).code === 'number';
}
