import { loadConfig } from '../../src/config';
import { sdkDisabled, tracingRequested } from '../../src/telemetry/sdk';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' };

describe('OTEL_SDK_DISABLED', () => {
  it.each(['true', 'TRUE', 'True', ' true ', '1', 'yes', 'YES'])('%j disables tracing, even with an endpoint or exporter set', (value) => {
    expect(sdkDisabled({ OTEL_SDK_DISABLED: value })).toBe(true);
    expect(tracingRequested({ ...ENDPOINT, OTEL_SDK_DISABLED: value })).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: value })).toBe(false);
  });

  it.each([undefined, '', 'false', 'FALSE', '0', 'no'])('%j leaves the endpoint in charge', (value) => {
    expect(sdkDisabled({ OTEL_SDK_DISABLED: value })).toBe(false);
    expect(tracingRequested({ ...ENDPOINT, OTEL_SDK_DISABLED: value })).toBe(true);
    expect(tracingRequested({ OTEL_SDK_DISABLED: value })).toBe(false);
  });

  it('agrees with what start-up validation accepts', () => {
    for (const value of ['true', 'TRUE', 'Yes', '1', 'false', 'No', '0']) {
      const config = loadConfig({ OTEL_SDK_DISABLED: value }, { embeddedAllowed: true });
      expect(config.env.OTEL_SDK_DISABLED).toBe(sdkDisabled({ OTEL_SDK_DISABLED: value }));
    }
    expect(() => loadConfig({ OTEL_SDK_DISABLED: 'maybe' }, { embeddedAllowed: true })).toThrow(/OTEL_SDK_DISABLED/);
    expect(sdkDisabled({ OTEL_SDK_DISABLED: 'maybe' })).toBe(false);
  });
});

describe('tracingRequested', () => {
  it('is off by default and follows OTEL_TRACES_EXPORTER over an endpoint', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
  });
});
