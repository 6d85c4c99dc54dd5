import { execFileSync } from 'node:child_process';
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

  describe('client certificates (KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE: mutual TLS)', () => {
    let other: SelfSignedCertificate;
    beforeAll(() => (other = selfSignedCertificate()));
    afterAll(() => other.remove());
    const mtls = (cert: string, key: string) => ({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key });

    it('takes the certificate and its key, read at start, beside the CA and SASL', () => {
      const cert = readFileSync(certificate.certFile, 'utf8').trim();
      const key = readFileSync(certificate.keyFile, 'utf8');
      expect(load({ ...mtls(certificate.certFile, certificate.keyFile), KAFKA_SSL_CA_FILE: other.certFile })).toMatchObject({
        bus: { tls: { ca: readFileSync(other.certFile, 'utf8').trim(), client: { cert, key } } },
      });
      expect(load({ ...mtls(certificate.certFile, certificate.keyFile), ...SCRAM })).toMatchObject({ bus: { tls: { client: { cert } }, sasl: { mechanism: 'scram-sha-512' } } });
    });

    it('needs KAFKA_SSL and both files', () => {
      expect(problemsOf({ KAFKA_SSL_CERT_FILE: certificate.certFile, KAFKA_SSL_KEY_FILE: certificate.keyFile })).toEqual([
        'KAFKA_SSL_CERT_FILE is set but KAFKA_SSL is not true',
        'KAFKA_SSL_KEY_FILE is set but KAFKA_SSL is not true',
      ]);
      expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: certificate.certFile })).toEqual([
        'KAFKA_SSL_KEY_FILE is required with KAFKA_SSL_CERT_FILE: a client certificate goes with its private key',
      ]);
      expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: certificate.keyFile })).toEqual([
        'KAFKA_SSL_CERT_FILE is required with KAFKA_SSL_KEY_FILE: a client certificate goes with its private key',
      ]);
    });

    it('stops the start on a key that is not the certificate\'s, unreadable, encrypted or no key, never quoting it', () => {
      const key = readFileSync(certificate.keyFile, 'utf8');
      const keyBody = key.split('\n')[1]!;
      const encrypted = file('encrypted.key', execFileSync('openssl', ['pkey', '-in', certificate.keyFile, '-aes256', '-passout', 'pass:secret-pass'], { encoding: 'utf8' }));
      const cases: Array<[string, RegExp]> = [
        [other.keyFile, /^KAFKA_SSL_KEY_FILE: the key in .* does not belong to the certificate in .*$/],
        [path.join(tmpdir(), 'no-such.key'), /^KAFKA_SSL_KEY_FILE: cannot read .*no-such\.key \(ENOENT\)$/],
        [encrypted, /^KAFKA_SSL_KEY_FILE: .*encrypted\.key holds no unencrypted PEM private key$/],
        [certificate.certFile, /^KAFKA_SSL_KEY_FILE: .* holds no unencrypted PEM private key$/],
      ];
      for (const [keyFile, problem] of cases) {
        const result = load(mtls(certificate.certFile, keyFile));
        expect([keyFile, 'problems' in result ? result.problems : result]).toEqual([keyFile, [expect.stringMatching(problem)]]);
        expect((result as { message: string }).message).not.toContain(keyBody);
      }
    });

    it('stops the start on a certificate file without a certificate, and on an expired certificate', () => {
      expect(problemsOf(mtls(certificate.keyFile, certificate.keyFile))).toEqual([expect.stringMatching(/^KAFKA_SSL_CERT_FILE: .* holds no PEM certificate/)]);
      // Valid from 2000 to 2001, self-signed by `openssl ca` (OpenSSL 3.0's `req` cannot date a certificate in the past).
      const ca = mkdtempSync(path.join(dir, 'expired-'));
      const expiredKey = path.join(ca, 'expired.key');
      const expiredCert = path.join(ca, 'expired.crt');
      writeFileSync(path.join(ca, 'index.txt'), '');
      writeFileSync(path.join(ca, 'serial'), '01\n');
      writeFileSync(path.join(ca, 'ca.cnf'), '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\npolicy=p\ndefault_md=sha256\n[p]\ncommonName=supplied\n');
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: ca, stdio: 'ignore' });
      openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=expired', '-keyout', expiredKey, '-out', 'request.csr');
      openssl('ca', '-batch', '-config', 'ca.cnf', '-selfsign', '-keyfile', expiredKey, '-in', 'request.csr', '-out', expiredCert, '-startdate', '20000101000000Z', '-enddate', '20010101000000Z');
      expect(problemsOf(mtls(expiredCert, expiredKey))).toEqual(['KAFKA_SSL_CERT_FILE: the certificate in ' + expiredCert + ' expired on 2001-01-01T00:00:00.000Z']);
    });
  });
});
