export * from './modules';
export * from './shutdown';
export * from './timeout';
export * from './claimed-rounds';
