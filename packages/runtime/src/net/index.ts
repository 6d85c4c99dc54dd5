export * from './allowed-networks';
export * from './address-policy';
export * from './errors';
export * from './guarded-lookup';
export * from './guarded-dispatcher';
export * from './guarded-fetch';
export * from './limit-subject';
export * from './url-policy';
