import type { Logger } from '../logging';

/**
 * The module system of the one executable, after Grafana Mimir: every module declares what it needs, a target
 * names the modules to run, and the manager starts them in dependency order and stops them in reverse.
 */
export interface ModuleDefinition<Context> {
  /** Modules this one needs: they are pulled into the target and started first. */
  deps?: readonly string[];
  /** Modules pulled into the target with this one, with no ordering between them. */
  with?: readonly string[];
  /** Modules that, when they are part of the target, start before this one (ordering only). */
  after?: readonly string[];
  start(context: Context, running: RunningModules): Promise<RunningModule | void>;
}

export interface RunningModule {
  /** What the module offers to the modules started after it (for example a Database). */
  value?: unknown;
  /** Stops the module, draining its work; called in reverse start order. */
  stop?(): Promise<void>;
}

export class RunningModules {
  private readonly byName = new Map<string, RunningModule>();

  add(name: string, module: RunningModule): void {
    this.byName.set(name, module);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The value a started module offers; throws when the module is not running (a missing dependency). */
  get<T>(name: string): T {
    const module = this.byName.get(name);
    if (!module) throw new Error(`module "${name}" is not running; declare it as a dependency`);
    return module.value as T;
  }

  entries(): [string, RunningModule][] {
    return [...this.byName.entries()];
  }
}

/** Expands the requested modules with their `deps` and `with` modules, then orders them for start. */
export function resolveStartOrder(
  definitions: Readonly<Record<string, ModuleDefinition<unknown>>>,
  requested: readonly string[],
): string[] {
  const included = new Set<string>();
  const include = (name: string, chain: string[]) => {
    if (!definitions[name]) throw new Error(`unknown module "${name}"${chain.length ? ` (needed by ${chain.join(' -> ')})` : ''}`);
    if (included.has(name)) return;
    included.add(name);
    for (const dep of [...(definitions[name].deps ?? []), ...(definitions[name].with ?? [])]) include(dep, [...chain, name]);
  };
  for (const name of requested) include(name, []);

  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`module dependency cycle: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    const definition = definitions[name]!;
    const before = [...(definition.deps ?? []), ...(definition.after ?? []).filter((n) => included.has(n))];
    for (const dep of before) visit(dep, [...path, name]);
    state.set(name, 'done');
    order.push(name);
  };
  // Visit in declaration order so the start order is stable and readable.
  for (const name of Object.keys(definitions)) if (included.has(name)) visit(name, []);
  return order;
}

/**
 * A module whose stop takes longer than this is named in a warning: a pod's shutdown is bounded by its grace period,
 * and an operator whose pods are killed at the end of it needs to know which part held them.
 */
export const SLOW_STOP_MS = 5_000;

/** Starts modules in order; if one fails, stops those already started (in reverse) and rethrows. */
export async function startModules<Context>(
  definitions: Readonly<Record<string, ModuleDefinition<Context>>>,
  order: readonly string[],
  context: Context,
  logger: Logger,
  options: { slowStopMs?: number } = {},
): Promise<{ running: RunningModules; stop(): Promise<void> }> {
  const slowStopMs = options.slowStopMs ?? SLOW_STOP_MS;
  const running = new RunningModules();
  const started: string[] = [];
  const stop = async () => {
    for (const name of [...started].reverse()) {
      const module = running.entries().find(([n]) => n === name)?.[1];
      const stopping = performance.now();
      try {
        await module?.stop?.();
        const ms = Math.round(performance.now() - stopping);
        if (ms > slowStopMs) logger.warn({ module: name, ms }, 'module was slow to stop');
        else logger.debug({ module: name, ms }, 'module stopped');
      } catch (error) {
        logger.error({ module: name, err: error }, 'module failed to stop cleanly');
      }
    }
    started.length = 0;
  };
  for (const name of order) {
    try {
      const module = (await definitions[name]!.start(context, running)) ?? {};
      running.add(name, module);
      started.push(name);
      logger.debug({ module: name }, 'module started');
    } catch (error) {
      logger.error({ module: name, err: error }, 'module failed to start');
      await stop();
      throw error;
    }
  }
  return { running, stop };
}
