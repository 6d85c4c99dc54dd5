import { AppError, limitSubjectOf, type Cache } from '@platform/runtime';

/**
 * Back-off for password sign-in: failures are counted in the shared cache per account (normalised email) and
 * per client address. Once a counter reaches its limit, a lock is set for the rest of the counter's window and
 * sign-in answers 429 `slow_down` without checking the password (so guessing stops, even for the right one).
 *
 * An attempt is counted before its password is checked and taken back if it succeeds: counted only after the check,
 * a burst of guesses sent at once would all be checked before the first failure was counted.
 */
const WINDOW_MS = 15 * 60_000;
const LIMITS = { account: 5, address: 20 } as const;
type Subject = keyof typeof LIMITS;

const counterKey = (subject: Subject, value: string) => `sign-in:fail:${subject}:${value}`;
const lockKey = (subject: Subject, value: string) => `sign-in:lock:${subject}:${value}`;

/** The address counts by its /64 when it is IPv6 (limitSubjectOf: a host may rotate through its /64). */
function subjects(email: string, clientIp: string): Array<[Subject, string]> {
  return clientIp ? [['account', email], ['address', limitSubjectOf(clientIp)]] : [['account', email]];
}

function slowDown(seconds: number): AppError {
  return new AppError('slow_down', 'Too many failed sign-in attempts; try again later', { headers: { 'Retry-After': String(seconds) } });
}

/** Throws 429 with Retry-After while the account or the address is locked. */
export async function assertNotLocked(cache: Cache, email: string, clientIp: string): Promise<void> {
  for (const [subject, value] of subjects(email, clientIp)) {
    const until = Number(await cache.get(lockKey(subject, value)));
    const seconds = Math.ceil((until - Date.now()) / 1000);
    if (Number.isFinite(seconds) && seconds > 0) throw slowDown(seconds);
  }
}

/**
 * Counts an attempt as a failure before its password is checked. An attempt beyond a limit locks its subject for the
 * rest of the window and is refused (429) unchecked; an attempt that reaches the limit is still checked.
 */
export async function countAttempt(cache: Cache, email: string, clientIp: string): Promise<void> {
  for (const [subject, value] of subjects(email, clientIp)) {
    const { count, resetInMs } = await cache.increment(counterKey(subject, value), WINDOW_MS);
    if (count >= LIMITS[subject]) {
      const ttl = Math.max(1000, resetInMs);
      await cache.set(lockKey(subject, value), String(Date.now() + ttl), ttl);
    }
    if (count > LIMITS[subject]) throw slowDown(Math.ceil(Math.max(1000, resetInMs) / 1000));
  }
}

/**
 * A successful sign-in takes its attempt back: the account's earlier failures are forgiven, the address's counter
 * only loses this attempt (it keeps counting other failures from the address). A lock the attempt set goes too.
 */
export async function forgiveAttempt(cache: Cache, email: string, clientIp: string): Promise<void> {
  await cache.delete(counterKey('account', email));
  await cache.delete(lockKey('account', email));
  if (!clientIp) return;
  const address = limitSubjectOf(clientIp);
  const { count } = await cache.increment(counterKey('address', address), WINDOW_MS, -1);
  if (count < LIMITS.address) await cache.delete(lockKey('address', address));
}
