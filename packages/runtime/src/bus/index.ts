export * from './port';
export { BusClosedError, MessageNotHandledError } from './errors';
export { createKafkaBus, type KafkaBusOptions } from './kafka';
export { KAFKA_SASL_MECHANISMS, type KafkaSasl, type KafkaSaslMechanism, type KafkaTls } from './kafka-security';
export { createMemoryBus, type MemoryBusOptions } from './memory';
export { MemoryBroker, type RetryBackoff } from './memory-broker';
export { createEventBus } from './create';
export { backoffMs } from './wakeup';
