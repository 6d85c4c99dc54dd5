export * from './logger';
export * from './process-warnings';
