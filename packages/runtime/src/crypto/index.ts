export { CryptoError, type CryptoErrorReason } from './errors';
export { parseKeyRing, KEY_BYTES, DEFAULT_KEY_ID, type KeyRing } from './key-ring';
export { SecretBox } from './secret-box';
export { Digester, parsePepper, MIN_PEPPER_BYTES } from './digester';
export { randomToken, constantTimeEqual } from './random';
export { timeOrderedUuid } from './time-ordered-id';
export { loadSecrets, SECRETS_FILE_NAME, type LoadSecretsOptions, type Secrets } from './load-secrets';
export * from './identity-key-timing';
