import { AppError, type Cache } from '@platform/runtime';

/**
 * Back-off for password sign-in: failures are counted in the shared cache per account (normalised email) and
 * per client address. Once a counter reaches its limit, a lock is set for the rest of the counter's window and
 * sign-in answers 429 `slow_down` without checking the password (so guessing stops, even for the right one).
 */
const WINDOW_MS = 15 * 60_000;
const LIMITS = { account: 5, address: 20 } as const;
type Subject = keyof typeof LIMITS;

const counterKey = (subject: Subject, value: string) => `sign-in:fail:${subject}:${value}`;
const lockKey = (subject: Subject, value: string) => `sign-in:lock:${subject}:${value}`;

function subjects(email: string, clientIp: string): Array<[Subject, string]> {
  return clientIp ? [['account', email], ['address', clientIp]] : [['account', email]];
}

/** Throws 429 with Retry-After while the account or the address is locked. */
export async function assertNotLocked(cache: Cache, email: string, clientIp: string): Promise<void> {
  for (const [subject, value] of subjects(email, clientIp)) {
    const until = Number(await cache.get(lockKey(subject, value)));
    const seconds = Math.ceil((until - Date.now()) / 1000);
    if (Number.isFinite(seconds) && seconds > 0) {
      throw new AppError('slow_down', 'Too many failed sign-in attempts; try again later', { headers: { 'Retry-After': String(seconds) } });
    }
  }
}

/** Counts a failed attempt; locks a subject whose failures reached its limit for the rest of the window. */
export async function recordFailure(cache: Cache, email: string, clientIp: string): Promise<void> {
  for (const [subject, value] of subjects(email, clientIp)) {
    const { count, resetInMs } = await cache.increment(counterKey(subject, value), WINDOW_MS);
    if (count >= LIMITS[subject]) {
      const ttl = Math.max(1000, resetInMs);
      await cache.set(lockKey(subject, value), String(Date.now() + ttl), ttl);
    }
  }
}

/** A successful sign-in forgives the account's earlier failures (the address counter keeps counting). */
export async function clearAccountFailures(cache: Cache, email: string): Promise<void> {
  await cache.delete(counterKey('account', email));
}
