/** Thrown when a closed bus is used. */
export class BusClosedError extends Error {
  constructor() {
    super('the event bus is closed');
    this.name = 'BusClosedError';
  }
}

/**
 * The in-process bus's publish failed: a consumer group it was handing the message to did not handle it (the
 * handler rejected, or the group's last member left first). The group still has the message and retries it; the
 * publisher (the outbox relay) keeps it unsent and publishes it again.
 */
export class MessageNotHandledError extends Error {
  constructor(
    readonly groupId: string,
    readonly topic: string,
    reason: string,
  ) {
    super(`consumer group ${groupId} did not handle a message of ${topic}: ${reason}`);
    this.name = 'MessageNotHandledError';
  }
}
