import { z } from 'zod';
import { AppError } from '../errors';

/** The cache channel on which the identity service announces every maintenance change. */
export const MAINTENANCE_CHANNEL = 'maintenance';

/** What every process needs to know about maintenance mode (§2.8): whether it is on, and why. */
export interface MaintenanceStatus {
  enabled: boolean;
  reason: string;
  plannedEndAt: string | null;
  /** The setting's revision; a signal older than what a process already knows is ignored. */
  revision: number;
}

export const MAINTENANCE_OFF: MaintenanceStatus = { enabled: false, reason: '', plannedEndAt: null, revision: 0 };

// The identity service publishes its proto `Maintenance` as JSON: int64 revision as a string, absent times absent.
const signalSchema = z.object({
  enabled: z.boolean(),
  reason: z.string().default(''),
  plannedEndAt: z.string().nullish(),
  revision: z.union([z.number(), z.string().regex(/^\d+$/)]).transform(Number),
});

/** Reads a maintenance status from any object shaped like it (a signal, a gRPC answer); null when it is not one. */
export function toMaintenanceStatus(value: unknown): MaintenanceStatus | null {
  const parsed = signalSchema.safeParse(value);
  if (!parsed.success) return null;
  return { enabled: parsed.data.enabled, reason: parsed.data.reason, plannedEndAt: parsed.data.plannedEndAt ?? null, revision: parsed.data.revision };
}

/** Seconds a client is told to wait before retrying work refused for maintenance. */
export const MAINTENANCE_RETRY_AFTER_SECONDS = 60;

/** The 503 `maintenance` error refusing `work` (for example "new ingestion") while maintenance is on. */
export function maintenanceError(status: MaintenanceStatus, work: string): AppError {
  return new AppError('maintenance', `Maintenance in progress: ${status.reason}; ${work} is paused`, {
    headers: { 'Retry-After': String(MAINTENANCE_RETRY_AFTER_SECONDS) },
  });
}
