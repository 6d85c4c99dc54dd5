import { Writable } from 'node:stream';
import { createLogger } from '../../src/logging';
import { runReadinessChecks, startOpsServer, type OpsServer, type ReadinessCheck } from '../../src/http';

function silentLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

const passing = (name: string): ReadinessCheck => ({ name, check: async () => undefined });
const failing = (name: string, message: string): ReadinessCheck => ({
  name,
  check: async () => {
    throw new Error(message);
  },
});

describe('runReadinessChecks', () => {
  it('reports ok when every check passes', async () => {
    const report = await runReadinessChecks([passing('database'), passing('cache')], 1_000);
    expect(report).toEqual({ status: 'ok', checks: { database: { ok: true }, cache: { ok: true } } });
  });

  it('names the failing check with a generic text, never the error message', async () => {
    const secretish = 'connect ECONNREFUSED postgres://admin:hunter2@db.internal:5432/platform';
    const report = await runReadinessChecks([passing('cache'), failing('database', secretish)], 1_000);
    expect(report.status).toBe('unavailable');
    expect(report.checks.cache).toEqual({ ok: true });
    expect(report.checks.database).toEqual({ ok: false, error: 'unavailable' });
    expect(JSON.stringify(report)).not.toContain('hunter2');
  });

  it('fails a check that does not answer within the timeout', async () => {
    const hanging: ReadinessCheck = { name: 'bus', check: () => new Promise(() => undefined) };
    const report = await runReadinessChecks([hanging, passing('database')], 50);
    expect(report.checks.bus).toEqual({ ok: false, error: 'timed out' });
    expect(report.checks.database).toEqual({ ok: true });
    expect(report.status).toBe('unavailable');
  });

  it('treats a check that throws synchronously like one that rejects', async () => {
    const throwing: ReadinessCheck = {
      name: 'broken',
      check: () => {
        throw new Error('boom');
      },
    };
    const report = await runReadinessChecks([throwing], 1_000);
    expect(report.checks.broken).toEqual({ ok: false, error: 'unavailable' });
  });

  it('runs the checks concurrently', async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waitsForOther = (name: string): ReadinessCheck => ({
      name,
      check: async () => {
        started.push(name);
        if (started.length === 2) release();
        await gate; // would time out if the checks ran one after the other
      },
    });
    const report = await runReadinessChecks([waitsForOther('a'), waitsForOther('b')], 2_000);
    expect(report.status).toBe('ok');
  });
});

describe('startOpsServer', () => {
  let server: OpsServer;
  let ready = true;
  const { logger } = silentLogger();

  beforeAll(async () => {
    server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      logger,
      readiness: () => runReadinessChecks(ready ? [passing('database')] : [failing('database', 'down')], 500),
    });
  });
  afterAll(() => server.close());

  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  it('answers /healthz while the process lives', async () => {
    const response = await fetch(url('/healthz'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it('answers /readyz with 200 when ready and 503 with the failing check when not', async () => {
    ready = true;
    const ok = await fetch(url('/readyz'));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ok', checks: { database: { ok: true } } });

    ready = false;
    const down = await fetch(url('/readyz'));
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { database: { ok: false, error: 'unavailable' } } });
  });

  it('serves Prometheus metrics with the registry content type', async () => {
    const response = await fetch(url('/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('# TYPE platform_http_request_duration_seconds histogram');
    expect(text).toContain('platform_process_cpu_user_seconds_total');
  });

  it('answers 404 for anything else', async () => {
    const response = await fetch(url('/v1/anything'));
    expect(response.status).toBe(404);
  });
});
