import { canonicalResourceUrl, sameResource } from '../../src/oauth/resource-url';

describe('canonicalResourceUrl (RFC 8707 resource indicators, compared exactly)', () => {
  it.each([
    ['https://GW.Example:443/mcp/x', 'https://gw.example/mcp/x'],
    ['http://gw.example:80/mcp/x', 'http://gw.example/mcp/x'],
    ['https://gw.example:8443/mcp/x', 'https://gw.example:8443/mcp/x'],
    ['https://gw.example/', 'https://gw.example/'],
  ])('canonicalises scheme, host and default port of %s', (value, canonical) => {
    expect(canonicalResourceUrl(value)).toBe(canonical);
  });

  it.each([
    ['a dot segment before the path', 'https://gw.example/a/../mcp/x'],
    ['a dot segment inside it', 'https://gw.example/mcp/./x'],
    ['an encoded dot segment', 'https://gw.example/a/%2e%2e/mcp/x'],
    ['a tab the parser drops', 'https://gw.example/mcp/\tx'],
    ['a space around it', ' https://gw.example/mcp/x'],
    ['a non-ASCII path the parser encodes', 'https://gw.example/mcp/é'],
    ['a backslash the parser reads as a slash', 'https://gw.example\\mcp/x'],
    ['no path at all', 'https://gw.example'],
    ['a query', 'https://gw.example/mcp/x?a=1'],
    ['an empty query', 'https://gw.example/mcp/x?'],
    ['a fragment', 'https://gw.example/mcp/x#f'],
    ['credentials', 'https://user:pw@gw.example/mcp/x'],
    ['another scheme', 'ftp://gw.example/mcp/x'],
    ['a relative reference', '/mcp/x'],
  ])('refuses %s', (_name, value) => {
    expect(canonicalResourceUrl(value)).toBeNull();
  });

  it('matches only the same resource', () => {
    expect(sameResource('HTTPS://gw.example:443/mcp/x', 'https://gw.example/mcp/x')).toBe(true);
    expect(sameResource('https://gw.example/a/../mcp/x', 'https://gw.example/mcp/x')).toBe(false);
    expect(sameResource('https://gw.example/mcp/x/', 'https://gw.example/mcp/x')).toBe(false);
  });
});
