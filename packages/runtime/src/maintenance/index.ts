export * from './status';
export * from './watcher';
