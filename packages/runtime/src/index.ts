/** The shared runtime every service and the edge use; nothing here is copied into a service. */
export * from './errors';
export * from './config';
export * from './logging';
export * from './telemetry';
export * from './lifecycle';
export * from './db';
export * from './outbox';
export * from './bus';
export * from './cache';
export * from './ratelimit';
export * from './crypto';
export * from './grpc';
export * from './http';
export * from './service';
export * from './audit';
export * from './maintenance';
export * from './net';
