import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { describeWith, kafkaMtlsClient, memoryLogger, selfSignedCertificate } from '@platform/test';
import { secureBuses } from './secure-bus';
import { waitFor } from './wait-for';

/**
 * The bus against the test broker's mutual-TLS listener (deploy/provision.sh: SSL, a client certificate signed by the
 * test CA required, as Strimzi's `tls` authentication and Aiven's default), configured as a process is, through the
 * real config loader from KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE.
 */
describeWith('kafka-mtls', 'Kafka bus over mutual TLS', (brokers) => {
  const buses = secureBuses('mtls', brokers);
  const mtlsEnv = (): NodeJS.ProcessEnv => {
    const client = kafkaMtlsClient();
    return { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: client.caFile, KAFKA_SSL_CERT_FILE: client.certFile, KAFKA_SSL_KEY_FILE: client.keyFile };
  };

  it('publishes, and a consumer group receives, with the client certificate the broker requires', async () => {
    const bus = buses.open(mtlsEnv());
    try {
      const received: string[] = [];
      const subscription = await bus.subscribe({ groupId: 'mtls-readers', topics: ['mtls.v1'], handler: async (m) => void received.push(m.value) });
      await bus.publish([{ topic: 'mtls.v1', key: 'k', value: 'over mutual TLS', headers: {} }]);
      await waitFor(() => expect(received).toEqual(['over mutual TLS']), 20_000);
      await subscription.close();
    } finally {
      await bus.close();
    }
  }, 60_000);

  it('is refused without a client certificate', async () => {
    const { KAFKA_SSL_CERT_FILE: _cert, KAFKA_SSL_KEY_FILE: _key, ...withoutClient } = mtlsEnv();
    await expect(buses.pingError(buses.open(withoutClient))).resolves.toBeInstanceOf(Error);
  }, 60_000);

  it('is refused with a certificate the broker does not trust, and neither the error nor the log holds its key', async () => {
    const stranger = selfSignedCertificate();
    try {
      const keyBody = readFileSync(stranger.keyFile, 'utf8').split('\n')[1]!;
      const { logger, text } = memoryLogger();
      const error = await buses.pingError(buses.open({ ...mtlsEnv(), KAFKA_SSL_CERT_FILE: stranger.certFile, KAFKA_SSL_KEY_FILE: stranger.keyFile }, logger));
      expect(inspect(error, { depth: 10 })).not.toContain(keyBody);
      expect(text()).not.toContain(keyBody);
    } finally {
      stranger.remove();
    }
  }, 60_000);
});
