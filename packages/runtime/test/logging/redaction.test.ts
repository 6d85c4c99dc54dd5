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
});
