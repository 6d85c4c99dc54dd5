import { onStopped, pauseUnlessStopped, signalOf, StopSwitch } from '../../src/mcp/stop-switch';

describe('StopSwitch (an exchange stop without an AbortSignal)', () => {
  it('calls each listener once, with the reason readable, and late listeners at once', () => {
    const stop = new StopSwitch();
    const heard: unknown[] = [];
    onStopped(stop, () => heard.push(stop.reason));
    const reason = new Error('timeout');
    stop.stop(reason);
    stop.stop(new Error('a second stop changes nothing'));
    expect(stop.aborted).toBe(true);
    expect(heard).toEqual([reason]);
    onStopped(stop, () => heard.push('late'));
    expect(heard).toEqual([reason, 'late']);
  });

  it('forgets a listener that stopped listening', () => {
    const stop = new StopSwitch();
    const heard: string[] = [];
    const forget = onStopped(stop, () => heard.push('first'));
    onStopped(stop, () => heard.push('second'));
    forget();
    stop.stop(new Error('cancelled'));
    expect(heard).toEqual(['second']);
  });

  it('gives an AbortSignal that follows it, before or after the stop', () => {
    const before = new StopSwitch();
    const signal = signalOf(before);
    expect(signal.aborted).toBe(false);
    const reason = new Error('client gone');
    before.stop(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const after = new StopSwitch();
    after.stop(reason);
    expect(signalOf(after).aborted).toBe(true);
    expect(signalOf(after).reason).toBe(reason);
  });

  it('hears an AbortSignal the same way', () => {
    const controller = new AbortController();
    const heard: string[] = [];
    const forget = onStopped(controller.signal, () => heard.push('one'));
    onStopped(controller.signal, () => heard.push('two'));
    forget();
    controller.abort();
    expect(heard).toEqual(['two']);
    expect(signalOf(controller.signal)).toBe(controller.signal);
    onStopped(controller.signal, () => heard.push('late'));
    expect(heard).toEqual(['two', 'late']);
  });

  it('pauses until the time is up, or no longer than the stop, also one that has fired already', async () => {
    const stopped = new StopSwitch();
    stopped.stop('done');
    const aborted = new AbortController();
    aborted.abort();
    // An hour each: the test's own timeout fails them if the fired stop is not heard at once.
    await expect(pauseUnlessStopped(3_600_000, stopped)).resolves.toBeUndefined();
    await expect(pauseUnlessStopped(3_600_000, aborted.signal)).resolves.toBeUndefined();
    const later = new StopSwitch();
    const pause = pauseUnlessStopped(3_600_000, later);
    later.stop('client_gone');
    await expect(pause).resolves.toBeUndefined();
    await expect(pauseUnlessStopped(1, new StopSwitch())).resolves.toBeUndefined();
  });
});
