import type { PlatformConfig } from '../config/load';
import type { Logger } from '../logging/logger';
import { createKafkaBus } from './kafka';
import { createMemoryBus } from './memory';
import type { EventBus } from './port';

/** The bus adapter the configuration asks for: Kafka when KAFKA_BROKERS is set, else the in-process bus. */
export function createEventBus(bus: PlatformConfig['bus'], logger: Logger): EventBus {
  if (bus.kind === 'kafka') {
    return createKafkaBus({ brokers: bus.brokers, clientId: bus.clientId, topicPrefix: bus.topicPrefix, tls: bus.tls, sasl: bus.sasl, logger });
  }
  return createMemoryBus({ topicPrefix: bus.topicPrefix, logger });
}
