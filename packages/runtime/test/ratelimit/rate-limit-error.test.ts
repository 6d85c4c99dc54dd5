import { AppError } from '../../src/errors';
import { rateLimitError } from '../../src/ratelimit/rate-limit-error';

describe('rateLimitError', () => {
  it('is a slow_down AppError (HTTP 429) carrying Retry-After', () => {
    const error = rateLimitError({ allowed: false, limit: 10, remaining: 0, retryAfterSeconds: 42 });
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('slow_down');
    expect(error.httpStatus).toBe(429);
    expect(error.headers).toEqual({ 'Retry-After': '42' });
    expect(error.message).toContain('42 seconds');
  });

  it('never asks to retry after less than one second', () => {
    const error = rateLimitError({ allowed: false, limit: 10, remaining: 0, retryAfterSeconds: 0 });
    expect(error.headers).toEqual({ 'Retry-After': '1' });
  });
});
