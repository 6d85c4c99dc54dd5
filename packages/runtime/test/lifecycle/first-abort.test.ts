import { getEventListeners } from 'node:events';
import { firstAbortOf } from '@platform/runtime';

/**
 * firstAbortOf: what a piece of work follows its callers' signals with (a shutdown signal, an edge's drain, a
 * deadline). Those may live as long as the process, so a finished piece of work must leave nothing on them.
 */
describe('firstAbortOf', () => {
  it('aborts with the reason of the first followed signal to abort', () => {
    const shutdown = new AbortController();
    const deadline = new AbortController();
    const { signal } = firstAbortOf([shutdown.signal, deadline.signal]);
    expect(signal.aborted).toBe(false);
    const reason = Object.assign(new Error('too slow'), { name: 'TimeoutError' });
    deadline.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    shutdown.abort(new Error('later'));
    expect(signal.reason).toBe(reason);
  });

  it('is aborted at once when a followed signal already is', () => {
    const reason = new Error('stopped');
    const { signal } = firstAbortOf([new AbortController().signal, AbortSignal.abort(reason)]);
    expect([signal.aborted, signal.reason]).toEqual([true, reason]);
  });

  it('leaves no listener on a long-lived signal once released, however many pieces of work followed it', () => {
    const lifelong = new AbortController();
    for (let work = 0; work < 1_000; work++) {
      const following = firstAbortOf([lifelong.signal, AbortSignal.timeout(60_000)]);
      // As the MCP SDK does once per request: a listener on the work's signal that nobody removes.
      following.signal.addEventListener('abort', () => undefined);
      following.release();
    }
    expect(getEventListeners(lifelong.signal, 'abort')).toHaveLength(0);
    // Released: the followed signal aborting no longer reaches it.
    const released = firstAbortOf([lifelong.signal]);
    released.release();
    lifelong.abort();
    expect(released.signal.aborted).toBe(false);
  });

  it('stops following the others once one aborted', () => {
    const shutdown = new AbortController();
    const done = new AbortController();
    firstAbortOf([shutdown.signal, done.signal]);
    done.abort();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });
});
