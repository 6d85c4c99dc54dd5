export * from './define';
export * from './status';
export * from './clients';
