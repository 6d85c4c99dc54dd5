export * from './readiness';
export * from './ops-router';
export * from './ops-app';
export * from './ops-server';
export * from './graceful-close';
