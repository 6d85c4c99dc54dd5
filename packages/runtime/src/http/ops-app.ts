import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logging';
import { createOpsRouter } from './ops-router';
import type { ReadinessReport } from './readiness';

export interface OpsAppOptions {
  readiness: () => Promise<ReadinessReport>;
  logger?: Logger;
}

/** An express app with only the ops endpoints, for processes that do not run the edge. */
export function createOpsApp(options: OpsAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(createOpsRouter(options));
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: { code: 'not_found', message: 'Not found' } });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    options.logger?.error({ err: error }, 'ops endpoint failed');
    if (!res.headersSent) res.status(500).json({ error: { code: 'internal', message: 'Internal error' } });
  });
  return app;
}
