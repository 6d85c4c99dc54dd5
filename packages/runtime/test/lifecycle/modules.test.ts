import { startModules, type ModuleDefinition } from '@platform/runtime';
import { memoryLogger } from '@platform/test';

describe('module manager: stopping', () => {
  it('stops modules in reverse start order and names one that was slow to stop in a warning', async () => {
    const { logger, lines } = memoryLogger();
    const stopped: string[] = [];
    const definitions: Record<string, ModuleDefinition<unknown>> = {
      quick: { start: async () => ({ stop: async () => void stopped.push('quick') }) },
      // A one-second stop against a threshold of half a second below.
      draining: {
        deps: ['quick'],
        start: async () => ({
          stop: async () => {
            await new Promise((resolve) => setTimeout(resolve, 1_000));
            stopped.push('draining');
          },
        }),
      },
    };
    const { stop } = await startModules(definitions, ['quick', 'draining'], undefined, logger, { slowStopMs: 500 });
    await stop();

    expect(stopped).toEqual(['draining', 'quick']);
    const warned = lines.filter((line) => line.level === 'warn');
    expect(warned).toEqual([expect.objectContaining({ msg: 'module was slow to stop', module: 'draining', ms: expect.any(Number) })]);
    expect(warned[0]!.ms).toBeGreaterThanOrEqual(500);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'debug', msg: 'module stopped', module: 'quick' }));
  });
});
