import { ConfigError, loadConfig } from '../../src/config/load';

/** What a start with `env` does: the config, or the ConfigError's problems. */
function load(env: NodeJS.ProcessEnv): { problems: string[] } | { env: ReturnType<typeof loadConfig>['env'] } {
  try {
    return { env: loadConfig(env, { embeddedAllowed: true }).env };
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems };
    throw error;
  }
}

describe('loadConfig: values a later parser reads are checked at start, naming the variable', () => {
  it.each([
    ['a CIDR without a prefix', '10.0.0.0', '"10.0.0.0"'],
    ['a lenient IPv4 form', '10.1/8', '"10.1/8"'],
    ['one bad entry among good ones', '10.0.0.0/8, nonsense', '"nonsense"'],
  ])('refuses ALLOWED_INTERNAL_NETWORKS with %s', (_name, value, entry) => {
    const result = load({ ALLOWED_INTERNAL_NETWORKS: value });
    expect('problems' in result && result.problems).toEqual([expect.stringMatching(/^ALLOWED_INTERNAL_NETWORKS: entry /)]);
    expect('problems' in result && result.problems[0]).toContain(entry);
  });

  it('takes good ALLOWED_INTERNAL_NETWORKS as written, and none when empty', () => {
    expect(load({ ALLOWED_INTERNAL_NETWORKS: '10.0.0.0/8, fd12:3456::/48' })).toMatchObject({ env: { ALLOWED_INTERNAL_NETWORKS: '10.0.0.0/8, fd12:3456::/48' } });
    expect(load({ ALLOWED_INTERNAL_NETWORKS: ' ' })).toMatchObject({ env: { ALLOWED_INTERNAL_NETWORKS: '' } });
    expect(load({})).toMatchObject({ env: { ALLOWED_INTERNAL_NETWORKS: '' } });
  });

  it.each([['a word', 'foo'], ['a bad address in a list', 'loopback, 10.0.0.300'], ['a bad prefix', '10.0.0.0/40']])(
    'refuses TRUST_PROXY with %s',
    (_name, value) => {
      const result = load({ TRUST_PROXY: value });
      expect('problems' in result && result.problems).toEqual([expect.stringMatching(/^TRUST_PROXY: must be true, false, a hop count/)]);
    },
  );

  it.each(['true', 'false', '2', 'loopback', 'loopback, 10.0.0.0/8, 192.168.1.1', '10.0.0.0/255.0.0.0', 'uniquelocal,linklocal'])(
    'takes TRUST_PROXY %s as written',
    (value) => {
      expect(load({ TRUST_PROXY: value })).toMatchObject({ env: { TRUST_PROXY: value } });
    },
  );
});

describe('loadConfig: APP_URL defaults to the address the edge listens on', () => {
  it('follows PORT when APP_URL is not set, so OAuth metadata and gateway URLs name the port that answers', () => {
    expect(load({ PORT: '9080' })).toMatchObject({ env: { PORT: 9080, APP_URL: 'http://localhost:9080' } });
    expect(load({ PORT: '9080', APP_URL: ' ' })).toMatchObject({ env: { APP_URL: 'http://localhost:9080' } });
    expect(load({})).toMatchObject({ env: { APP_URL: 'http://localhost:8080' } });
  });

  it('keeps a given APP_URL whatever PORT is, and the default for PORT 0 (any free port names no address)', () => {
    expect(load({ PORT: '9080', APP_URL: 'https://platform.example.com/' })).toMatchObject({ env: { APP_URL: 'https://platform.example.com' } });
    expect(load({ PORT: '0' })).toMatchObject({ env: { APP_URL: 'http://localhost:8080' } });
  });
});
