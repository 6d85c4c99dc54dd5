export type CryptoErrorReason =
  | 'malformed_key_ring'
  | 'malformed_pepper'
  | 'missing_secret'
  | 'malformed_secrets_file'
  | 'unknown_key'
  | 'malformed_ciphertext'
  | 'authentication_failed';

/** Every failure of the crypto module. Its message never contains key material, plaintext or ciphertext. */
export class CryptoError extends Error {
  constructor(
    readonly reason: CryptoErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'CryptoError';
  }
}
