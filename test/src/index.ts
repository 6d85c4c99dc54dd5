export * from './infra';
