import type { KafkaConfig, SASLOptions } from 'kafkajs';

/** The SASL mechanisms the Kafka bus speaks (KAFKA_SASL_MECHANISM), spelled as kafkajs spells them. */
export const KAFKA_SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

/** TLS to the brokers (KAFKA_SSL). The brokers' certificates are always verified. The key is a secret: never log this object. */
export interface KafkaTls {
  /** PEM certificates trusted instead of the system store (KAFKA_SSL_CA_FILE's content): a private CA. */
  ca?: string;
  /** The client's own certificate chain and private key (KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE), both PEM: mutual TLS. */
  client?: { cert: string; key: string };
}

/** SASL authentication (KAFKA_SASL_*). The password is a secret: never log this object. */
export interface KafkaSasl {
  mechanism: KafkaSaslMechanism;
  username: string;
  password: string;
}

/** kafkajs's `ssl` and `sasl` for the bus's one client (its producer, consumers and admin alike). */
export function kafkaJsSecurity(tls: KafkaTls | undefined, sasl: KafkaSasl | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    // rejectUnauthorized last: verification stays on whatever else is given.
    ...(tls ? { ssl: { ...(tls.ca ? { ca: [tls.ca] } : {}), ...tls.client, rejectUnauthorized: true } } : {}),
    ...(sasl ? { sasl: saslOptions(sasl) } : {}),
  };
}

/** kafkajs types its options per mechanism; each case narrows `mechanism` to one. */
function saslOptions({ mechanism, username, password }: KafkaSasl): SASLOptions {
  switch (mechanism) {
    case 'plain':
      return { mechanism, username, password };
    case 'scram-sha-256':
      return { mechanism, username, password };
    case 'scram-sha-512':
      return { mechanism, username, password };
  }
}
