import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { selfSignedCertificate, type SelfSignedCertificate } from '@platform/test';
import { ConfigError, loadConfig, type PlatformConfig } from '../../src/config/load';

const PASSWORD = 'hunter2-kafka-secret';
const BROKERS = { KAFKA_BROKERS: '127.0.0.1:9094' };
const SCRAM = { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: PASSWORD };

/** What a start with `env` does: the bus configuration, or the ConfigError's problems (and its whole message). */
function load(env: NodeJS.ProcessEnv): { bus: PlatformConfig['bus'] } | { problems: string[]; message: string } {
  try {
    return { bus: loadConfig({ ...BROKERS, ...env }, { embeddedAllowed: true }).bus };
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems, message: error.message };
    throw error;
  }
}

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  const result = load(env);
  if (!('problems' in result)) throw new Error(`started with ${JSON.stringify(env)}`);
  expect(result.message).not.toContain(PASSWORD);
  return result.problems;
}

describe('loadConfig: Kafka TLS and SASL (KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SASL_*)', () => {
  let certificate: SelfSignedCertificate;
  let dir: string;
  beforeAll(() => {
    certificate = selfSignedCertificate();
    dir = mkdtempSync(path.join(tmpdir(), 'kafka-ca-'));
  });
  afterAll(() => {
    certificate.remove();
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string, content: string) => {
    const at = path.join(dir, name);
    writeFileSync(at, content);
    return at;
  };

  it('speaks plaintext without authentication by default', () => {
    expect(load({})).toEqual({ bus: { kind: 'kafka', brokers: ['127.0.0.1:9094'], clientId: 'mcp-platform', topicPrefix: '' } });
  });

  it('takes TLS with the CA file read at start, and SASL with the mechanism in any letter case', () => {
    const pem = readFileSync(certificate.certFile, 'utf8');
    expect(load({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: certificate.certFile, ...SCRAM, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' })).toMatchObject({
      bus: { kind: 'kafka', tls: { ca: pem.trim() }, sasl: { mechanism: 'scram-sha-512', username: 'svc', password: PASSWORD } },
    });
    // Without a CA file, the system trust store.
    expect(load({ KAFKA_SSL: 'yes' })).toMatchObject({ bus: { tls: {} } });
    expect(load({ KAFKA_SSL: 'false', ...SCRAM })).not.toHaveProperty('bus.tls');
  });

  it.each([
    ['a missing file', () => path.join(tmpdir(), 'no-such-ca.pem'), /^KAFKA_SSL_CA_FILE: cannot read .*no-such-ca\.pem \(ENOENT\)$/],
    ['a directory', () => tmpdir(), /^KAFKA_SSL_CA_FILE: cannot read .* \(EISDIR\)$/],
    ['a file without a certificate', () => file('key.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), /^KAFKA_SSL_CA_FILE: .*key\.pem holds no PEM certificate/],
    ['a certificate that does not parse', () => file('broken.pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n'), /^KAFKA_SSL_CA_FILE: certificate 1 of .*broken\.pem does not parse$/],
  ])('stops the start on %s as KAFKA_SSL_CA_FILE', (_name, at, problem) => {
    expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: at(), ...SCRAM })).toEqual([expect.stringMatching(problem)]);
  });

  it('refuses a CA file without KAFKA_SSL, and a KAFKA_SSL that is not a boolean', () => {
    expect(problemsOf({ KAFKA_SSL_CA_FILE: certificate.certFile })).toEqual(['KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true']);
    expect(problemsOf({ KAFKA_SSL: 'maybe', ...SCRAM })).toEqual([expect.stringMatching(/^KAFKA_SSL: /)]);
  });

  it('refuses an unknown mechanism, naming the ones it takes', () => {
    expect(problemsOf({ KAFKA_SSL: 'true', ...SCRAM, KAFKA_SASL_MECHANISM: 'gssapi' })).toEqual([
      expect.stringMatching(/^KAFKA_SASL_MECHANISM: .*"plain".*"scram-sha-256".*"scram-sha-512"/),
    ]);
  });

  it('needs both the username and the password with a mechanism, and a mechanism with either', () => {
    expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toEqual([
      'KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD are required when KAFKA_SASL_MECHANISM is set',
    ]);
    expect(problemsOf({ KAFKA_SSL: 'true', ...SCRAM, KAFKA_SASL_PASSWORD: ' ' })).toEqual(['KAFKA_SASL_PASSWORD is required when KAFKA_SASL_MECHANISM is set']);
    expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: PASSWORD })).toEqual([
      expect.stringMatching(/^KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD are set but KAFKA_SASL_MECHANISM is not/),
    ]);
  });

  it('refuses PLAIN (the password in clear) without TLS unless KAFKA_SASL_ALLOW_PLAINTEXT says the network is encrypted; SCRAM may go without', () => {
    const plain = { ...SCRAM, KAFKA_SASL_MECHANISM: 'plain' };
    expect(problemsOf(plain)).toEqual([expect.stringMatching(/^KAFKA_SASL_MECHANISM=plain sends the password in clear without KAFKA_SSL=true/)]);
    expect(load({ ...plain, KAFKA_SASL_ALLOW_PLAINTEXT: 'true' })).toMatchObject({ bus: { sasl: { mechanism: 'plain' } } });
    expect(load({ ...plain, KAFKA_SSL: 'true' })).toMatchObject({ bus: { tls: {}, sasl: { mechanism: 'plain' } } });
    expect(load(SCRAM)).toMatchObject({ bus: { sasl: { mechanism: 'scram-sha-512' } } });
  });
});
