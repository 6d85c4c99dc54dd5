/**
 * `promise`, or a rejection with `timedOut()` once `timeoutMs` pass first. The timer keeps no process alive and is
 * cleared either way; the promise itself runs on (a caller that must stop it passes it a signal of its own).
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), timeoutMs);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
