import { Router, type Request, type Response } from 'express';
import type { Logger } from '../logging';
import { metricsRegistry } from '../telemetry/metrics';
import type { ReadinessReport } from './readiness';

export interface OpsRouterOptions {
  readiness: () => Promise<ReadinessReport>;
  logger?: Logger;
}

/**
 * Liveness: answering at all is the signal; it must not depend on anything outside the process. Cheap enough to be
 * served on a public port too (the edge's, for load balancers and the image's HEALTHCHECK).
 */
export function livenessHandler(_req: Request, res: Response): void {
  res.set('Cache-Control', 'no-store').status(200).json({ status: 'ok' });
}

/**
 * The operations endpoints every process serves on its ops listener (OPS_PORT, never the public port): liveness,
 * readiness and Prometheus metrics. Readiness runs the process's dependency checks; `dependencies` in its body lists
 * what the process calls but does not need in order to be ready (the edge's services), which never fails it.
 */
export function createOpsRouter(options: OpsRouterOptions): Router {
  const router = Router();

  router.get('/healthz', livenessHandler);

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
      .json({ status: ready ? 'ok' : 'unavailable', checks: report.checks, ...(report.dependencies ? { dependencies: report.dependencies } : {}) });
  });

  router.get('/metrics', async (_req: Request, res: Response) => {
    const body = await metricsRegistry.metrics();
    res.set('Content-Type', metricsRegistry.contentType).set('Cache-Control', 'no-store').send(body);
  });

  return router;
}
