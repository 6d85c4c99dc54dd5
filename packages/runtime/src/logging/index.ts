export * from './logger';
export * from './process-warnings';
export * from './log-throttle';
