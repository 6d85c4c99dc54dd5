import { runInNewContext } from 'node:vm';
import { DatabaseError } from 'pg';
import { DatabaseUnavailableError } from '../../src/db/errors';
import { unavailableOr } from '../../src/db/unavailable';

/** Which database errors are an outage (503 `unavailable`) and which stay what they are (a statement's, a bug's). */
describe('unavailableOr', () => {
  const serverError = (code: string) => Object.assign(new DatabaseError('server said so', 0, 'error'), { code, severity: 'ERROR' });
  const socketError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code}`), { code, syscall, errno: -1 });

  it.each([
    ['a refused connection', socketError('ECONNREFUSED', 'connect')],
    ['a broken pipe (a five-letter errno, not a SQLSTATE)', socketError('EPIPE', 'write')],
    ['a server shutting down', serverError('57P01')],
    ['a lost connection (class 08)', serverError('08006')],
    ['statement_timeout', serverError('57014')],
    ['too many connections', serverError('53300')],
    ['the pool waiting too long', new Error('timeout exceeded when trying to connect')],
    [
      "a socket's error from another realm (node's core under a test runner's sandbox)",
      runInNewContext(`Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read', errno: -104 })`) as Error,
    ],
  ])('takes %s for an outage', (_name, error) => {
    const mapped = unavailableOr(error);
    expect(mapped).toBeInstanceOf(DatabaseUnavailableError);
    expect((mapped as DatabaseUnavailableError).cause).toBe(error);
  });

  it.each([
    ['a unique violation', serverError('23505')],
    ['a protocol violation (a statement sent with the wrong number of parameters: a bug)', serverError('08P01')],
    ['a missing table', serverError('42P01')],
    ['anything else', new Error('something else')],
  ])('keeps %s as it is', (_name, error) => {
    expect(unavailableOr(error)).toBe(error);
  });
});
