export type { DomainEvent } from './envelope';
export { parseDomainEvent } from './envelope';
export { writeEvent, EVENT_HEADERS, type NewEvent } from './write-event';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
export { consumeEvents, singleEventHandler, PARK_AFTER_ATTEMPTS, type ConsumeEventsOptions } from './consume';
export { listParkedEvents, discardParkedEvent, replayParkedEvent, type ParkedEvent, type ReplayOutcome } from './parked-events';
export { nudgeRelay } from './nudge';
export { runtimeMigrations, runtimeMigrationsFor, type RuntimeMigration } from './migrations';
