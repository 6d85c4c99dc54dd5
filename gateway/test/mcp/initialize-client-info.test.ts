import { randomBytes } from 'node:crypto';
import { SecretBox } from '@platform/runtime';
import type { DataPlane } from '../../src/mcp/data-plane';
import type { ResolvedGateway } from '../../src/mcp/exposures';
import { initializeSession } from '../../src/mcp/initialize';
import type { McpPrincipal } from '../../src/oauth/resource-server';

const GRINNING = '\u{1F600}'; // one character, two UTF-16 units

/**
 * `initialize` keeps the client's name (clientInfo.name, which every call record of the session carries) to 200
 * characters and its version to 60, cut between characters: half a surrogate pair is text PostgreSQL refuses.
 * A gateway without servers, so nothing is opened upstream.
 */
describe('initialize: clientInfo', () => {
  const plane = { box: SecretBox.fromKeyRing(`k1:${randomBytes(32).toString('base64')}`) } as unknown as DataPlane;
  const principal = { personId: '6f9619ff-8b86-4011-b42d-00cf4fc964ff' } as McpPrincipal;
  const resolved = {
    exposure: { runtime: { servers: [], gateway: { id: '0b7e3a52-8f1f-4c5e-9d7a-2f1b3c4d5e6f', slug: 'tools', name: 'Tools' } } },
  } as unknown as ResolvedGateway;
  const initialize = (clientInfo: Record<string, unknown>) =>
    initializeSession(plane, principal, resolved, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', clientInfo } });

  it('cuts the name and version by characters, never inside a surrogate pair', async () => {
    const { session } = await initialize({ name: `${'n'.repeat(199)}${GRINNING}more`, version: `${'v'.repeat(59)}${GRINNING}1` });
    expect(session.clientName).toBe(`${'n'.repeat(199)}${GRINNING}`);
    expect(session.clientVersion).toBe(`${'v'.repeat(59)}${GRINNING}`);
  });

  it('keeps a name within the bound as it is', async () => {
    const { session } = await initialize({ name: `claude ${GRINNING}`, version: '1.2.3' });
    expect(session).toMatchObject({ clientName: `claude ${GRINNING}`, clientVersion: '1.2.3' });
  });
});
