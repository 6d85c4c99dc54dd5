export * from './define';
export * from './status';
export * from './clients';
export * from './auth-invalidation';
export * from './platform-team';
export * from './publish-policy';
