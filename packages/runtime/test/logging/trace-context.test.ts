import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { installTestTracing, memoryLogger } from '@platform/test';
import { withSpan } from '../../src/telemetry/tracing';

/**
 * A log line written inside a span carries its trace context under the names OTel gives it in a non-OTLP (JSON) log,
 * `trace_id`, `span_id` and `trace_flags` (W3C's two hex digits), the fields log pipelines correlate on.
 */
const { uninstall } = installTestTracing();
afterAll(uninstall);

it('writes the active span\'s trace id, span id and sampled flag', async () => {
  const { logger, lines } = memoryLogger();
  const ids = await withSpan('logged', {}, async (span) => {
    logger.info('inside');
    return span.spanContext();
  });
  expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '01' });
  expect(lines[0]).not.toHaveProperty('traceId');
  expect(lines[0]).not.toHaveProperty('spanId');
});

it('writes the flags of a trace its caller did not sample as 00', () => {
  const { logger, lines } = memoryLogger();
  const caller = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.NONE, isRemote: true };
  context.with(trace.setSpanContext(ROOT_CONTEXT, caller), () => logger.info('unsampled'));
  expect(lines[0]).toMatchObject({ trace_id: caller.traceId, span_id: caller.spanId, trace_flags: '00' });
});

it('writes no trace fields outside a span', () => {
  const { logger, lines } = memoryLogger();
  logger.info('outside');
  for (const field of ['trace_id', 'span_id', 'trace_flags']) expect(lines[0]).not.toHaveProperty(field);
});
