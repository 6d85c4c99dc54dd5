export * from './modules';
export * from './shutdown';
export * from './timeout';
export * from './first-abort';
export * from './claimed-rounds';
