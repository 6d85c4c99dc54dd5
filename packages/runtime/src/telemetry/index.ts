export * from './tracing';
export * from './metrics';
export * from './sdk';
