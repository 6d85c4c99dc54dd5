import type { RuntimeCapability, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { buildExposure } from '../../src/mcp/exposure';
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
