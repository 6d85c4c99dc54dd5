const HOOKS = Symbol('edge stop hooks');
const DRAIN_HOOKS = Symbol('edge drain hooks');
type WithHooks = object & { [HOOKS]?: Array<() => Promise<void>>; [DRAIN_HOOKS]?: Array<() => void> };

/**
 * Registers work to finish when the edge stops (for example the /mcp data plane closing, which flushes its call
 * records). The platform's gateway module calls `stopEdge` after the HTTP listener has drained.
 */
export function onEdgeStop(edge: object, hook: () => Promise<void>): void {
  const withHooks = edge as WithHooks;
  (withHooks[HOOKS] ??= []).push(hook);
}

/**
 * Registers what to do when the HTTP listener begins draining, before it waits for the requests in flight: end the
 * streams that would otherwise hold the drain for its whole grace (the /mcp GET streams).
 */
export function onEdgeDrain(edge: object, hook: () => void): void {
  const withHooks = edge as WithHooks;
  (withHooks[DRAIN_HOOKS] ??= []).push(hook);
}

/** Runs every registered drain hook (the platform's HTTP module calls it as its stop begins). */
export function drainEdge(edge: object): void {
  for (const hook of (edge as WithHooks)[DRAIN_HOOKS] ?? []) hook();
}

/** Runs every registered stop hook; one failing does not keep the others from running. */
export async function stopEdge(edge: object): Promise<void> {
  const hooks = (edge as WithHooks)[HOOKS] ?? [];
  const results = await Promise.allSettled(hooks.map((hook) => hook()));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
