import { types } from 'node:util';

/**
 * Whether `value` is an Error, also one made in another realm: a socket's error comes from node's core, which under a
 * test runner's sandbox (jest's vm context) is not `instanceof Error` there.
 */
export function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}
