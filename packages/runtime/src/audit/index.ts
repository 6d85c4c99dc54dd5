export * from './event';
export * from './scrub';
