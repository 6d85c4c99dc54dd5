export { GrpcServer, type GrpcServerOptions } from './server';
export { LocalChannel, type UnaryChannel } from './local-channel';
export { createGrpcClient, type GeneratedClientConstructor, type GrpcClientOptions } from './client';
export { checkHealth, OVERALL_HEALTH } from './health';
export { appErrorToStatus, statusToAppError, ERROR_CODE_KEY, ERROR_FIELDS_KEY, ERROR_HEADERS_KEY } from './errors';
export type {
  AsyncClient,
  AsyncImplementationFor,
  AsyncServiceImplementation,
  AsyncUnaryHandler,
  ClientMethodName,
  GrpcCallContext,
  GrpcCallOptions,
} from './types';
export { isReadMethod, readMethodsOf } from './read-methods';
export { followReadiness, type ReadinessHealth, type ReadinessHealthOptions } from './readiness-health';
