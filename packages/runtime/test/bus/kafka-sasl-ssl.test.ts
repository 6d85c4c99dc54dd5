import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { describeWith, kafkaSaslSslCredentials, memoryLogger } from '@platform/test';
import { secureBuses } from './secure-bus';
import { waitFor } from './wait-for';

/**
 * The bus against the test broker's SASL_SSL listener (deploy/provision.sh: a private test CA, SCRAM and PLAIN users),
 * configured as a process is, through the real config loader from KAFKA_SSL, KAFKA_SSL_CA_FILE and KAFKA_SASL_*.
 */
describeWith('kafka-sasl-ssl', 'Kafka bus over SASL_SSL', (brokers) => {
  const buses = secureBuses('sasl', brokers);
  const credentials = () => kafkaSaslSslCredentials();
  /** KAFKA_SSL with the test CA and the test user, for `mechanism`. */
  const secureEnv = (mechanism: string): NodeJS.ProcessEnv => ({
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: credentials().caFile,
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: credentials().username,
    KAFKA_SASL_PASSWORD: credentials().password,
  });

  it('publishes, and a consumer group receives, with SCRAM-SHA-512 and the private CA', async () => {
    // Any letter case, as Kafka's own clients spell it.
    const bus = buses.open(secureEnv('SCRAM-SHA-512'));
    try {
      const received: string[] = [];
      const subscription = await bus.subscribe({ groupId: 'secure-readers', topics: ['secure.v1'], handler: async (m) => void received.push(m.value) });
      await bus.publish([{ topic: 'secure.v1', key: 'k', value: 'over SASL_SSL', headers: {} }]);
      await waitFor(() => expect(received).toEqual(['over SASL_SSL']), 20_000);
      await subscription.close();
    } finally {
      await bus.close();
    }
  }, 60_000);

  it.each(['scram-sha-256', 'plain'])('authenticates with %s too', async (mechanism) => {
    const bus = buses.open(secureEnv(mechanism));
    try {
      await bus.ping();
    } finally {
      await bus.close();
    }
  }, 30_000);

  it('refuses a wrong password with an authentication error that neither it nor the log repeats', async () => {
    const wrong = `wrong-${randomUUID()}`;
    const { logger, text } = memoryLogger();
    const error = await buses.pingError(buses.open({ ...secureEnv('scram-sha-512'), KAFKA_SASL_PASSWORD: wrong }, logger));
    expect(error.message).toMatch(/SASL SCRAM SHA512 authentication failed/);
    // The whole error, its cause and properties included, and every log line.
    expect(inspect(error, { depth: 10 })).not.toContain(wrong);
    expect(text()).not.toContain(wrong);
  }, 30_000);

  it('refuses a broker whose certificate the trust store does not vouch for (no KAFKA_SSL_CA_FILE: the system store)', async () => {
    const { KAFKA_SSL_CA_FILE: _ca, ...withoutCa } = secureEnv('scram-sha-512');
    const error = await buses.pingError(buses.open(withoutCa));
    expect(inspect(error, { depth: 10 })).toMatch(/self[- ]signed certificate|unable to (get|verify) .*certificate/i);
  }, 60_000);
});
