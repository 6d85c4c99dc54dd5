import { context, propagation, trace } from '@opentelemetry/api';
import { startModules } from '@platform/runtime';
import { memoryLogger } from '@platform/test';
import { exportedServiceNames, otlpReceiverForFile } from '../../runtime/test/telemetry/otlp-receiver';
import type { PlatformContext } from '../src/context';
import { MODULES } from '../src/modules';
import { parseTargets } from '../src/targets';

/**
 * The `service.name` a process reports when no OTEL_* variable names one: each target its own, as the chart names
 * them (OTEL_SERVICE_NAME `mcp-platform-<target>`, helm/platform/templates/_podspec.tpl), so split targets run
 * without the chart are still told apart. The telemetry module runs as the process starts it, exporting over
 * OTLP/HTTP to a receiver on loopback; what the variables say over it is otel-environment.test.ts's.
 */
const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES'];

const otlp = otlpReceiverForFile(OTEL_KEYS);

/** The service name a process of `--target=<target>` exports a span under. */
async function serviceNameOf(target: string): Promise<string[]> {
  otlp().exports.splice(0);
  for (const key of OTEL_KEYS) delete process.env[key];
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp().endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  const { logger } = memoryLogger();
  const ctx = { targets: parseTargets(target).targets, logger } as unknown as PlatformContext;
  const modules = await startModules(MODULES, ['telemetry'], ctx, logger);
  try {
    trace.getTracer('service-name-test').startSpan('probe').end();
  } finally {
    await modules.stop(); // flushes the export
    trace.disable();
    propagation.disable();
    context.disable();
  }
  return exportedServiceNames(otlp().exports);
}

it('names each target as the chart does, and the all-in-one process mcp-platform-all', async () => {
  expect(await serviceNameOf('identity')).toEqual(['mcp-platform-identity']);
  expect(await serviceNameOf('gateway')).toEqual(['mcp-platform-gateway']);
  expect(await serviceNameOf('all')).toEqual(['mcp-platform-all']);
  expect(await serviceNameOf('identity,catalog')).toEqual(['mcp-platform-identity-catalog']);
});
