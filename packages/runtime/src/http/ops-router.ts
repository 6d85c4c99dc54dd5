import { Router, type Request, type Response } from 'express';
import type { Logger } from '../logging';
import { metricsRegistry } from '../telemetry/metrics';
import type { ReadinessReport } from './readiness';

export interface OpsRouterOptions {
  readiness: () => Promise<ReadinessReport>;
  logger?: Logger;
}

/** The operations endpoints every process serves: liveness, readiness and Prometheus metrics. */
export function createOpsRouter(options: OpsRouterOptions): Router {
  const router = Router();

  // Liveness: answering at all is the signal; it must not depend on anything outside the process.
  router.get('/healthz', (_req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store').status(200).json({ status: 'ok' });
  });

  router.get('/readyz', async (_req: Request, res: Response) => {
    let report: ReadinessReport;
    try {
      report = await options.readiness();
    } catch (error) {
      options.logger?.warn({ reason: error instanceof Error ? error.name : 'error' }, 'readiness probe failed');
      report = { status: 'unavailable', checks: {} };
    }
    const ready = report.status === 'ok' && Object.values(report.checks).every((c) => c.ok);
    res
      .set('Cache-Control', 'no-store')
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ok' : 'unavailable', checks: report.checks });
  });

  router.get('/metrics', async (_req: Request, res: Response) => {
    const body = await metricsRegistry.metrics();
    res.set('Content-Type', metricsRegistry.contentType).set('Cache-Control', 'no-store').send(body);
  });

  return router;
}
