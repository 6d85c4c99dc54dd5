import type { RuntimeCapability, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { buildExposure, MAX_RESOURCE_URI_LENGTH } from '../../src/mcp/exposure';
import { GatewayRpcError, RPC } from '../../src/mcp/jsonrpc';
import { routeRequest } from '../../src/mcp/methods';

const template = (uriTemplate: string): RuntimeCapability => ({
  kind: 'resource_template',
  name: uriTemplate,
  exposedName: uriTemplate,
  definitionJson: JSON.stringify({ uriTemplate, name: uriTemplate }),
  fingerprint: 'f',
});

/** Which upstream a request goes to, from the exposure alone (only approved capabilities are in it). */
describe('data plane routing', () => {
  // Only `docs://{+path}` is approved; the upstream's `docs://internal/{id}` is hidden, so it is not in the runtime.
  const server = { id: 's1', slug: 'docs', prefix: 'docs', capabilities: [template('docs://{+path}')] } as unknown as RuntimeServer;
  const exposure = buildExposure({ servers: [server] });
  const complete = (uri: string) => routeRequest(exposure, { jsonrpc: '2.0', id: 1, method: 'completion/complete', params: { ref: { type: 'ref/resource', uri }, argument: { name: 'id', value: '' } } });

  it('routes a completion naming an exposed template', () => {
    expect(complete('docs://{+path}')).toMatchObject({ kind: 'upstream', server: { id: 's1' }, exposedName: 'docs://{+path}' });
  });

  it('refuses a completion naming a template that is not exposed, even when an exposed template would match its text', () => {
    let refusal: unknown;
    try {
      complete('docs://internal/{id}');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(GatewayRpcError);
    expect(refusal).toMatchObject({ code: RPC.invalidParams });
  });

  it('still routes reads of URIs that an exposed template matches', () => {
    const read = routeRequest(exposure, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'docs://guides/intro' } });
    expect(read).toMatchObject({ kind: 'upstream', server: { id: 's1' } });
  });
});

describe('data plane resource routing', () => {
  const capability = (kind: 'resource' | 'resource_template', uri: string, approvedAt: string): RuntimeCapability => ({
    kind,
    name: uri,
    exposedName: uri,
    definitionJson: JSON.stringify(kind === 'resource' ? { uri, name: uri } : { uriTemplate: uri, name: uri }),
    fingerprint: 'f',
    approvedAt,
  });
  const serverOf = (id: string, capabilities: RuntimeCapability[]) => ({ id, slug: id, prefix: '', capabilities }) as unknown as RuntimeServer;
  const read = (exposure: ReturnType<typeof buildExposure>, uri: string) => routeRequest(exposure, { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri } });
  const refusalOf = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('tries templates in the order of their approval, not of the gateway, so a later approval captures no URI', () => {
    // The broad template's server comes first in the gateway, but its template was approved after the other's.
    const broad = serverOf('broad', [capability('resource_template', 'docs://{+path}', '2025-01-02T00:00:00.000Z')]);
    const narrow = serverOf('narrow', [capability('resource_template', 'docs://g/{id}', '2025-01-01T00:00:00.000Z')]);
    const exposure = buildExposure({ servers: [broad, narrow] });
    expect(read(exposure, 'docs://g/7')).toMatchObject({ kind: 'upstream', server: { id: 'narrow' } });
    expect(read(exposure, 'docs://elsewhere/7')).toMatchObject({ kind: 'upstream', server: { id: 'broad' } });
    // Lists keep the gateway's order.
    expect(exposure.lists.resourceTemplates.map((template) => template.uriTemplate)).toEqual(['docs://{+path}', 'docs://g/{id}']);
  });

  it('refuses a URI longer than the bound before matching templates, and serves one at the bound or a listed one', () => {
    const longListed = `docs://listed/${'l'.repeat(MAX_RESOURCE_URI_LENGTH)}`;
    const exposure = buildExposure({
      servers: [serverOf('s', [capability('resource_template', 'docs://{+path}', '2025-01-01T00:00:00.000Z'), capability('resource', longListed, '2025-01-01T00:00:00.000Z')])],
    });
    const atBound = `docs://${'a'.repeat(MAX_RESOURCE_URI_LENGTH - 'docs://'.length)}`;
    expect(read(exposure, atBound)).toMatchObject({ kind: 'upstream', server: { id: 's' } });
    const refusal = refusalOf(() => read(exposure, `${atBound}a`));
    expect(refusal).toBeInstanceOf(GatewayRpcError);
    expect(refusal).toMatchObject({ code: RPC.invalidParams, errorClass: 'invalid_params' });
    expect((refusal as Error).message).toContain(`at most ${MAX_RESOURCE_URI_LENGTH} characters`);
    expect(refusalOf(() => routeRequest(exposure, { jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: `${atBound}a` } }))).toMatchObject({ code: RPC.invalidParams });
    // A resource listed under exactly that URI is no template match: it is served whatever its length.
    expect(read(exposure, longListed)).toMatchObject({ kind: 'upstream', server: { id: 's' } });
  });

  it('refuses a URI whose matching would cost more than the gateway allows, instead of matching it slowly', () => {
    // 100 overlapping expressions: about 200 alive states per character of a URI they almost match.
    const exposure = buildExposure({ servers: [serverOf('s', [capability('resource_template', '{a}'.repeat(100), '2025-01-01T00:00:00.000Z')])] });
    expect(read(exposure, 'a'.repeat(150))).toMatchObject({ kind: 'upstream', server: { id: 's' } });
    const refusal = refusalOf(() => read(exposure, `${'a'.repeat(MAX_RESOURCE_URI_LENGTH - 1)}/`));
    expect(refusal).toMatchObject({ code: RPC.invalidParams, errorClass: 'invalid_params' });
    expect((refusal as Error).message).toMatch(/more work to match .* than the gateway allows/);
  });
});
