import { AddressNotAllowedError } from '@platform/runtime';
import { upstreamFailure } from '../../src/mcp/upstream-errors';

const classOf = (error: unknown) => upstreamFailure('srv', error, 30).errorClass;

describe('upstreamFailure: what a failed exchange with an upstream is called in the call record', () => {
  it('names aborts and timeouts by their DOMException name, whose numeric code says nothing', () => {
    // What AbortController.abort() and AbortSignal.timeout() give, as undici rethrows them.
    expect(classOf(new DOMException('This operation was aborted', 'AbortError'))).toBe('cancelled');
    expect(classOf(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe('timeout');
    expect(classOf(new Error('fetch failed', { cause: new DOMException('aborted', 'AbortError') }))).toBe('cancelled');
  });

  it('names socket failures by their code', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    expect(classOf(coded('ECONNREFUSED'))).toBe('connection_refused');
    expect(classOf(new Error('fetch failed', { cause: coded('ECONNRESET') }))).toBe('unreachable');
    expect(classOf(coded('UND_ERR_HEADERS_TIMEOUT'))).toBe('timeout');
    expect(classOf(new AddressNotAllowedError('10.0.0.1'))).toBe('address_not_allowed');
    expect(classOf(new Error('something else'))).toBe('unreachable');
  });
});
