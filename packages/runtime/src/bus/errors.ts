/** Thrown when a closed bus is used. */
export class BusClosedError extends Error {
  constructor() {
    super('the event bus is closed');
    this.name = 'BusClosedError';
  }
}
