import { context, propagation, trace } from '@opentelemetry/api';
import { memoryLogger } from '@platform/test';
import { startTelemetry } from '../../src/telemetry/sdk';
import { exportedServiceNames, otlpReceiverForFile } from './otlp-receiver';

/**
 * The OTEL_* variables as the OpenTelemetry specification defines them, through the real Node SDK exporting over
 * OTLP/HTTP to a receiver on loopback. The SDK reads process.env itself, so each case sets it and puts it back.
 */
const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_TRACES_SAMPLER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER'];

const otlp = otlpReceiverForFile(OTEL_KEYS);

/** Starts the SDK under `variables` (with the receiver as the OTLP endpoint), makes one span, and shuts it down (flushing). */
async function oneSpanUnder(variables: Record<string, string>): Promise<void> {
  for (const key of OTEL_KEYS) delete process.env[key];
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp().endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...variables });
  const telemetry = await startTelemetry({ serviceName: 'mcp-platform-test', logger: memoryLogger().logger });
  try {
    // A tracer got now: the platform's own (telemetry/tracing.ts) holds the provider of the first SDK a process starts.
    trace.getTracer('otel-environment-test').startSpan('probe').end();
  } finally {
    await telemetry.shutdown();
    // The SDK registered itself globally; the next case starts its own.
    trace.disable();
    propagation.disable();
    context.disable();
  }
}

describe('service.name', () => {
  it('is the default the process gives when no variable names it', async () => {
    await oneSpanUnder({});
    expect(exportedServiceNames(otlp().exports)).toEqual(['mcp-platform-test']);
  });

  it('comes from service.name in OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is not set', async () => {
    await oneSpanUnder({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=catalog-eu,deployment.environment.name=staging' });
    expect(exportedServiceNames(otlp().exports)).toEqual(['catalog-eu']);
  });

  it('comes from OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES', async () => {
    await oneSpanUnder({ OTEL_SERVICE_NAME: 'mcp-platform-identity', OTEL_RESOURCE_ATTRIBUTES: 'service.name=catalog-eu' });
    expect(exportedServiceNames(otlp().exports)).toEqual(['mcp-platform-identity']);
  });

  it('ignores an empty OTEL_SERVICE_NAME, as an unset one', async () => {
    await oneSpanUnder({ OTEL_SERVICE_NAME: '' });
    expect(exportedServiceNames(otlp().exports)).toEqual(['mcp-platform-test']);
  });
});

describe('OTEL_TRACES_SAMPLER', () => {
  it('always_off exports no span', async () => {
    await oneSpanUnder({ OTEL_TRACES_SAMPLER: 'always_off' });
    expect(exportedServiceNames(otlp().exports)).toEqual([]);
  });
});

describe('what the SDK exports', () => {
  it('sends traces only: the platform has no OpenTelemetry metrics or logs to push, its metrics are on /metrics', async () => {
    await oneSpanUnder({});
    expect(new Set(otlp().exports.map((entry) => entry.path))).toEqual(new Set(['/v1/traces']));
  });
});
