import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KafkaSasl, KafkaTls } from '../bus/kafka-security';
import type { Environment } from './schema';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The Kafka bus's TLS and SASL from KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE and
 * KAFKA_SASL_*, pushing what is wrong onto `problems`. The files are read here, at start, so a missing or broken one
 * stops the process rather than every connection failing later. Problems name variables and files, never the
 * password's or the key's content.
 */
export function kafkaSecurity(env: Environment, problems: string[]): { tls?: KafkaTls; sasl?: KafkaSasl } {
  const security: { tls?: KafkaTls; sasl?: KafkaSasl } = {};

  for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const) {
    if (env[name] && !env.KAFKA_SSL) problems.push(`${name} is set but KAFKA_SSL is not true`);
  }
  if (env.KAFKA_SSL) {
    const ca = env.KAFKA_SSL_CA_FILE ? readCaFile(env.KAFKA_SSL_CA_FILE, problems) : undefined;
    const client = clientCertificate(env, problems);
    security.tls = { ...(ca !== undefined ? { ca } : {}), ...(client ? { client } : {}) };
  }

  const mechanism = env.KAFKA_SASL_MECHANISM;
  if (!mechanism) {
    const given = (['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const).filter((name) => env[name] !== undefined);
    if (given.length > 0) {
      problems.push(`${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} set but KAFKA_SASL_MECHANISM is not (plain, scram-sha-256 or scram-sha-512): nothing would authenticate`);
    }
    return security;
  }
  const missing = (['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const).filter((name) => env[name] === undefined);
  if (missing.length > 0) problems.push(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required when KAFKA_SASL_MECHANISM is set`);
  // PLAIN hands the broker the password itself; SCRAM proves it without sending it.
  if (mechanism === 'plain' && !env.KAFKA_SSL && !env.KAFKA_SASL_ALLOW_PLAINTEXT) {
    problems.push(
      'KAFKA_SASL_MECHANISM=plain sends the password in clear without KAFKA_SSL=true: set KAFKA_SSL=true, ' +
        'or KAFKA_SASL_ALLOW_PLAINTEXT=true if the network itself is encrypted (a service mesh)',
    );
  }
  if (env.KAFKA_SASL_USERNAME !== undefined && env.KAFKA_SASL_PASSWORD !== undefined) {
    security.sasl = { mechanism, username: env.KAFKA_SASL_USERNAME, password: env.KAFKA_SASL_PASSWORD };
  }
  return security;
}

/** The file's PEM certificates, or undefined with a problem pushed when it cannot be read or holds none that parse. */
function readCaFile(file: string, problems: string[]): string | undefined {
  return readCertificates('KAFKA_SSL_CA_FILE', file, problems)?.pem;
}

/** The file's text, or undefined with a problem naming `variable` pushed when it cannot be read. */
function readPem(variable: string, file: string, problems: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
}

/** The file's PEM certificates (each parsed), joined and one by one; undefined with a problem pushed otherwise. */
function readCertificates(variable: string, file: string, problems: string[]): { pem: string; certificates: string[] } | undefined {
  const pem = readPem(variable, file, problems);
  if (pem === undefined) return undefined;
  const certificates = pem.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    problems.push(`${variable}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return undefined;
  }
  for (const [index, certificate] of certificates.entries()) {
    try {
      new X509Certificate(certificate);
    } catch {
      problems.push(`${variable}: certificate ${index + 1} of ${file} does not parse`);
      return undefined;
    }
  }
  return { pem: certificates.join('\n'), certificates };
}

/**
 * The client's certificate chain and private key for mutual TLS, both or neither. The key must be unencrypted PEM (what
 * Strimzi's and Aiven's user Secrets hold) and belong to the chain's first certificate, which must be valid now: a
 * mismatch or an expired certificate would otherwise surface as every broker refusing every connection.
 */
function clientCertificate(env: Environment, problems: string[]): { cert: string; key: string } | undefined {
  const { KAFKA_SSL_CERT_FILE: certFile, KAFKA_SSL_KEY_FILE: keyFile } = env;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    problems.push(`${certFile ? 'KAFKA_SSL_KEY_FILE' : 'KAFKA_SSL_CERT_FILE'} is required with ${certFile ? 'KAFKA_SSL_CERT_FILE' : 'KAFKA_SSL_KEY_FILE'}: a client certificate goes with its private key`);
    return undefined;
  }
  const chain = readCertificates('KAFKA_SSL_CERT_FILE', certFile, problems);
  const keyPem = readPem('KAFKA_SSL_KEY_FILE', keyFile, problems);
  if (chain === undefined || keyPem === undefined) return undefined;
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    // Never the parser's message: it may quote the file.
    problems.push(`KAFKA_SSL_KEY_FILE: ${keyFile} holds no unencrypted PEM private key`);
    return undefined;
  }
  const leaf = new X509Certificate(chain.certificates[0]!);
  if (!leaf.checkPrivateKey(key)) {
    problems.push(`KAFKA_SSL_KEY_FILE: the key in ${keyFile} does not belong to the certificate in ${certFile}`);
    return undefined;
  }
  if (Date.parse(leaf.validTo) <= Date.now()) {
    problems.push(`KAFKA_SSL_CERT_FILE: the certificate in ${certFile} expired on ${new Date(leaf.validTo).toISOString()}`);
    return undefined;
  }
  return { cert: chain.pem, key: keyPem };
}
