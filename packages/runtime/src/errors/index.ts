export * from './codes';
export * from './app-error';
export * from './transient';
