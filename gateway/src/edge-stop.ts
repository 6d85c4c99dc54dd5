const HOOKS = Symbol('edge stop hooks');
type WithHooks = object & { [HOOKS]?: Array<() => Promise<void>> };

/**
 * Registers work to finish when the edge stops (for example the /mcp data plane closing, which flushes its call
 * records). The platform's gateway module calls `stopEdge` after the HTTP listener has drained.
 */
export function onEdgeStop(edge: object, hook: () => Promise<void>): void {
  const withHooks = edge as WithHooks;
  (withHooks[HOOKS] ??= []).push(hook);
}

/** Runs every registered stop hook; one failing does not keep the others from running. */
export async function stopEdge(edge: object): Promise<void> {
  const hooks = (edge as WithHooks)[HOOKS] ?? [];
  const results = await Promise.allSettled(hooks.map((hook) => hook()));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
