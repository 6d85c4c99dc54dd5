export * from './infra';
export * from './tracing';
export * from './openapi';
export * from './logging';
export * from './platform';
export * from './http-client';
export * from './net';
