import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * A real OpenTelemetry SDK that keeps finished spans in memory, installed globally for one test file (jest
 * gives each file its own globals). Call `uninstall` in afterAll.
 */
export function installTestTracing(): { exporter: InMemorySpanExporter; uninstall(): void } {
  const exporter = new InMemorySpanExporter();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  return {
    exporter,
    uninstall() {
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
