import { environmentSchema } from '../config/schema';
import type { Logger } from '../logging';

/**
 * OTEL_SDK_DISABLED as the environment schema reads it (`true`, `1` or `yes`, any letter case), so the value
 * start-up validation accepted is the value obeyed here. A value the schema refuses stops the process in
 * loadConfig before telemetry starts; read here on its own, it does not disable.
 */
export function sdkDisabled(env: NodeJS.ProcessEnv): boolean {
  const parsed = environmentSchema.shape.OTEL_SDK_DISABLED.safeParse(env.OTEL_SDK_DISABLED);
  return parsed.success && parsed.data;
}

/**
 * Whether the standard OTEL_* variables ask for traces. Tracing is off by default; setting
 * OTEL_TRACES_EXPORTER (otlp, zipkin, console) or an OTLP endpoint turns it on, and OTEL_SDK_DISABLED
 * (true, 1 or yes) wins over both.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (sdkDisabled(env)) return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry Node SDK with its exporter chosen by OTEL_* variables. No auto-instrumentation is
 * loaded: the platform makes its spans by hand at HTTP, gRPC, SQL and bus boundaries (telemetry/tracing.ts).
 */
export async function startTelemetry(options: { serviceName: string; logger: Logger; env?: NodeJS.ProcessEnv }): Promise<Telemetry> {
  const env = options.env ?? process.env;
  if (!tracingRequested(env)) return { shutdown: async () => {} };
  // Loaded only when wanted: the SDK and its exporters are heavy to import.
  const { NodeSDK, resources } = await import('@opentelemetry/sdk-node');
  // The process's name is only the default under what the variables say: OTEL_RESOURCE_ATTRIBUTES (merged over this
  // by the SDK's env detector) may name the service, and OTEL_SERVICE_NAME, when not empty, wins over both (spec).
  // NodeSDK's `serviceName` would win over OTEL_RESOURCE_ATTRIBUTES, so it carries only OTEL_SERVICE_NAME.
  const resource = resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': options.serviceName }));
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || undefined;
  const sdk = new NodeSDK({ resource, ...(serviceName ? { serviceName } : {}), instrumentations: [] });
  sdk.start();
  options.logger.info({ exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp' }, 'OpenTelemetry tracing on');
  return { shutdown: () => sdk.shutdown() };
}
