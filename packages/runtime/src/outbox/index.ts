export type { DomainEvent } from './envelope';
export { parseDomainEvent } from './envelope';
export { writeEvent, EVENT_HEADERS, type NewEvent } from './write-event';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
export { consumeEvents, type ConsumeEventsOptions } from './consume';
export { nudgeRelay } from './nudge';
export { runtimeMigrations, runtimeMigrationsFor, type RuntimeMigration } from './migrations';
