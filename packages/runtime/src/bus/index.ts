export * from './port';
export { BusClosedError, MessageNotHandledError } from './errors';
export { createKafkaBus, type KafkaBusOptions } from './kafka';
export { createMemoryBus, type MemoryBusOptions } from './memory';
export { MemoryBroker, type RetryBackoff } from './memory-broker';
export { createEventBus } from './create';
export { backoffMs } from './wakeup';
