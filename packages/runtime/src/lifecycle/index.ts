export * from './modules';
export * from './shutdown';
