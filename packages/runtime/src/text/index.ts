export * from './storable';
export * from './instant';
