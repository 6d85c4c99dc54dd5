import { checkHealth, OVERALL_HEALTH } from '../../src/grpc/health';
import { followReadiness, type ReadinessHealth } from '../../src/grpc/readiness-health';
import type { ReadinessCheck } from '../../src/http/readiness';
import { memoryLogger, PROBE_SERVICE, startProbeServer, STATUS } from './fixtures';

/** A check the test turns on and off. */
function switchable(name: string, options: { informational?: boolean } = {}): ReadinessCheck & { passing: boolean } {
  const check = {
    name,
    passing: true,
    ...options,
    async check() {
      if (!check.passing) throw new Error(`${name} is down`);
    },
  };
  return check;
}

/** Rounds run only when the test asks (checkNow); the timer's interval is longer than any test. */
const NEVER_MS = 60 * 60 * 1000;

describe('followReadiness: grpc.health.v1 follows the readiness checks', () => {
  let health: ReadinessHealth | undefined;
  afterEach(async () => {
    await health?.stop();
    health = undefined;
  });

  it('turns every service and the server NOT_SERVING while a dependency fails, and SERVING again once it answers', async () => {
    const { server, address } = await startProbeServer(async () => STATUS);
    const database = switchable('database');
    const cache = switchable('cache');
    const { logger, lines } = memoryLogger();
    try {
      health = followReadiness({ server, checks: () => [database, cache], intervalMs: NEVER_MS, logger });
      expect(await health.checkNow()).toBe(true);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(true);

      database.passing = false;
      expect(await health.checkNow()).toBe(false);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(false);
      expect(await checkHealth(address, OVERALL_HEALTH)).toBe(false);
      expect(lines.find((line) => line.msg?.toString().includes('NOT_SERVING'))).toMatchObject({ failing: ['database (unavailable)'] });

      database.passing = true;
      expect(await health.checkNow()).toBe(true);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(true);
      expect(await checkHealth(address, OVERALL_HEALTH)).toBe(true);
    } finally {
      await server.stop(1_000);
    }
  });

  it("ignores informational checks (the edge's services are not this process's readiness)", async () => {
    const { server, address } = await startProbeServer(async () => STATUS);
    const downstream = switchable('service:notifications', { informational: true });
    downstream.passing = false;
    try {
      health = followReadiness({ server, checks: () => [switchable('database'), downstream], intervalMs: NEVER_MS, logger: memoryLogger().logger });
      expect(await health.checkNow()).toBe(true);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(true);
    } finally {
      await server.stop(1_000);
    }
  });

  it('runs its first round at once, and reads the checks each round (modules add theirs as they start)', async () => {
    const { server, address } = await startProbeServer(async () => STATUS);
    const checks: ReadinessCheck[] = [];
    const bus = switchable('bus');
    bus.passing = false;
    checks.push(bus);
    try {
      health = followReadiness({ server, checks: () => checks, intervalMs: NEVER_MS, logger: memoryLogger().logger });
      // checkNow waits for the round that started with followReadiness, then runs one more.
      await health.checkNow();
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(false);
      checks.splice(0, 1);
      expect(await health.checkNow()).toBe(true);
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(true);
    } finally {
      await server.stop(1_000);
    }
  });

  it('changes nothing once stopped', async () => {
    const { server, address } = await startProbeServer(async () => STATUS);
    const database = switchable('database');
    try {
      health = followReadiness({ server, checks: () => [database], intervalMs: NEVER_MS, logger: memoryLogger().logger });
      database.passing = false;
      expect(await health.checkNow()).toBe(false);
      await health.stop();
      database.passing = true;
      await health.checkNow();
      expect(await checkHealth(address, PROBE_SERVICE)).toBe(false);
    } finally {
      await server.stop(1_000);
    }
  });
});
