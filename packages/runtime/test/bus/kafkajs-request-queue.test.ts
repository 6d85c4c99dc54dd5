import { createRequire } from 'node:module';
import { waitFor } from './wait-for';

/**
 * kafkajs 2.2.4 re-armed a 1 ms timer for ever on every broker connection that had ever answered (tulios/kafkajs#1556):
 * about 7 % of a core in an idle platform process, and the same on top of every request under load. The fix lives in
 * patches/kafkajs+2.2.4.patch, applied by `npm install` (postinstall: patch-package); these tests fail if it is not.
 */
interface RequestQueue {
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(request: unknown): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
}
type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueue;

const RequestQueue = createRequire(__filename)('kafkajs/src/network/requestQueue') as RequestQueueClass;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function queue(): RequestQueue {
  return new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'test:9092', logger: quiet });
}

function request(correlationId: number, sent: number[]) {
  const entry = { correlationId, apiKey: 0, apiName: 'Produce', apiVersion: 0, resolve: () => undefined, reject: () => undefined };
  return { entry, expectResponse: true, sendRequest: () => sent.push(correlationId) };
}

const answer = (correlationId: number) => ({ correlationId, payload: Buffer.alloc(0), size: 0 });

describe('kafkajs request queue (patched)', () => {
  it('schedules nothing once no request is waiting: no timer loop on an idle connection', () => {
    const q = queue();
    const sent: number[] = [];
    q.push(request(1, sent));
    q.fulfillRequest(answer(1));
    expect(sent).toEqual([1]);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request that had to wait: when the one in flight is answered, and when a throttle ends', async () => {
    const q = queue();
    const sent: number[] = [];
    q.push(request(1, sent));
    q.push(request(2, sent)); // one in flight at most: this one waits
    expect(sent).toEqual([1]);
    q.fulfillRequest(answer(1));
    expect(sent).toEqual([1, 2]);
    q.fulfillRequest(answer(2));

    q.maybeThrottle(50); // the broker asked the client to hold back
    q.push(request(3, sent));
    expect(sent).toEqual([1, 2]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    await waitFor(() => expect(sent).toEqual([1, 2, 3]));
    q.fulfillRequest(answer(3));
    expect(q.throttleCheckTimeoutId).toBeNull();
  });
});
