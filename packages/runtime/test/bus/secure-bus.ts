import { deleteKafkaState, infraUrl, uniquePrefix } from '@platform/test';
import { createEventBus, type EventBus } from '../../src/bus';
import { loadConfig } from '../../src/config/load';
import type { Logger } from '../../src/logging';
import { silentLogger } from './bus-contract';

/**
 * Buses on one of the test broker's secured listeners, configured as a process is, through the real config loader
 * from `env` (KAFKA_SSL, KAFKA_SASL_*, ...), each under a topic prefix of its own that is deleted after the file's
 * tests (through the plaintext listener, the only one the cleanup helper speaks).
 */
export function secureBuses(clientId: string, brokers: () => string): { open: (env: NodeJS.ProcessEnv, logger?: Logger) => EventBus; pingError: (bus: EventBus) => Promise<Error> } {
  const prefixes: string[] = [];
  afterAll(async () => {
    const plaintext = infraUrl('kafka');
    if (plaintext) for (const prefix of prefixes) await deleteKafkaState(plaintext, prefix);
  });
  return {
    open(env, logger = silentLogger) {
      const topicPrefix = uniquePrefix(clientId);
      prefixes.push(topicPrefix);
      const config = loadConfig({ KAFKA_BROKERS: brokers(), KAFKA_CLIENT_ID: clientId, KAFKA_TOPIC_PREFIX: topicPrefix, ...env }, { embeddedAllowed: true });
      return createEventBus(config.bus, logger);
    },
    /** What `ping` (an admin request) rejects with; the bus is closed either way. */
    async pingError(bus) {
      try {
        await bus.ping();
      } catch (error) {
        return error as Error;
      } finally {
        await bus.close();
      }
      throw new Error('ping succeeded');
    },
  };
}
