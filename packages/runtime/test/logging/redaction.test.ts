import { memoryLogger } from '@platform/test';

describe('logger redaction', () => {
  // Defence in depth: the db module strips a failed statement's bound parameters, but an error that still
  // carried them (another driver, a wrapped error) must not write them.
  it("never writes an error's bound parameters (params)", () => {
    const { logger, text } = memoryLogger();
    const error = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      params: ['team-id', 'sha256:secret-digest-value'],
    });
    logger.error({ err: error }, 'statement failed');
    logger.warn({ params: ['sha256:secret-digest-value'] }, 'top level');
    expect(text()).toContain('23505');
    expect(text()).toContain('[redacted]');
    expect(text()).not.toContain('secret-digest-value');
  });

  it('redacts secret-named keys two levels down, in OAuth\'s snake_case too', () => {
    const { logger, text } = memoryLogger();
    logger.warn({ err: { cause: { params: ['deep-bound-value'], sessionToken: 'deep-session-token' } } }, 'nested');
    logger.warn({ body: { access_token: 'oauth-access-value', refresh_token: 'oauth-refresh-value', client_secret: 'oauth-client-secret' } }, 'oauth');
    logger.warn({ change: { newPassword: 'new-password-value', privateKey: 'private-key-value' } }, 'change');
    for (const value of ['deep-bound-value', 'deep-session-token', 'oauth-access-value', 'oauth-refresh-value', 'oauth-client-secret', 'new-password-value', 'private-key-value']) {
      expect(text()).not.toContain(value);
    }
    expect(text()).toContain('[redacted]');
  });
});
