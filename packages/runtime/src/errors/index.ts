export * from './codes';
export * from './app-error';
