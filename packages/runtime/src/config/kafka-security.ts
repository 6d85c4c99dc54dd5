import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KafkaSasl, KafkaTls } from '../bus/kafka-security';
import type { Environment } from './schema';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The Kafka bus's TLS and SASL from KAFKA_SSL, KAFKA_SSL_CA_FILE and KAFKA_SASL_*, pushing what is wrong onto
 * `problems`. The CA file is read here, at start, so a missing or broken one stops the process rather than every
 * connection failing later. Problems name variables, never the password's value.
 */
export function kafkaSecurity(env: Environment, problems: string[]): { tls?: KafkaTls; sasl?: KafkaSasl } {
  const security: { tls?: KafkaTls; sasl?: KafkaSasl } = {};

  if (env.KAFKA_SSL_CA_FILE && !env.KAFKA_SSL) problems.push('KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true');
  if (env.KAFKA_SSL) {
    const ca = env.KAFKA_SSL_CA_FILE ? readCaFile(env.KAFKA_SSL_CA_FILE, problems) : undefined;
    security.tls = ca === undefined ? {} : { ca };
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
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`KAFKA_SSL_CA_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
  const certificates = pem.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    problems.push(`KAFKA_SSL_CA_FILE: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return undefined;
  }
  for (const [index, certificate] of certificates.entries()) {
    try {
      new X509Certificate(certificate);
    } catch {
      problems.push(`KAFKA_SSL_CA_FILE: certificate ${index + 1} of ${file} does not parse`);
      return undefined;
    }
  }
  return certificates.join('\n');
}
