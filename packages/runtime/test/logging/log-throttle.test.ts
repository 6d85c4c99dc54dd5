import { LogThrottle } from '../../src/logging/log-throttle';

describe('LogThrottle', () => {
  it('lets the first line through, holds back the rest of the interval, and counts them for the next', () => {
    const throttle = new LogThrottle(10_000);
    expect(throttle.pass(1_000)).toBe(0);
    expect([throttle.pass(1_001), throttle.pass(5_000), throttle.pass(10_999)]).toEqual([undefined, undefined, undefined]);
    expect(throttle.pass(11_000)).toBe(3);
    expect(throttle.pass(11_001)).toBeUndefined();
    expect(throttle.pass(60_000)).toBe(1);
  });
});
